/**
 * The local model's seeded generator (xoshiro128**, seeded through splitmix32). Each choice's stream
 * comes from (seed, prompt index, candidate index): reproducible, and different for each of n choices.
 */
import { randomBytes } from 'node:crypto';

/** Where sampling draws its uniform numbers from (tests pass a fixed sequence). */
export interface RandomSource {
  /** A uniform double in [0, 1). */
  next(): number;
}

export class LocalRandom implements RandomSource {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(words: readonly number[]) {
    let state = 0x9e3779b9;
    const mix = (): number => {
      // splitmix32: spreads arbitrary seed words over the whole state, never all zero
      state = (state + 0x9e3779b9) | 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    for (const word of words) state = (state ^ Math.imul(word | 0, 0x27d4eb2d)) + mix();
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix() | 1;
  }

  /** A generator for one choice: `seed` null draws fresh entropy. */
  static forChoice(seed: number | null, promptIndex: number, candidateIndex: number): LocalRandom {
    if (seed === null) {
      const entropy = randomBytes(16);
      return new LocalRandom([entropy.readUInt32LE(0), entropy.readUInt32LE(4), entropy.readUInt32LE(8), entropy.readUInt32LE(12)]);
    }
    // Seeds may be any integer the API accepts (up to 64 bits): split into two 32-bit words.
    const high = Math.floor(seed / 0x100000000);
    const low = seed - high * 0x100000000;
    return new LocalRandom([low >>> 0, high >>> 0, promptIndex, candidateIndex, 0x5eed]);
  }

  private nextWord(): number {
    const result = Math.imul(rotate(Math.imul(this.b, 5), 7), 9) >>> 0;
    const shifted = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= shifted;
    this.d = rotate(this.d, 11);
    return result;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  next(): number {
    const high = this.nextWord() >>> 5;
    const low = this.nextWord() >>> 6;
    return (high * 67108864 + low) / 9007199254740992;
  }
}

function rotate(value: number, bits: number): number {
  return (value << bits) | (value >>> (32 - bits));
}
