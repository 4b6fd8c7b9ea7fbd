/**
 * Most chunks of one upstream stream are byte for byte the same JSON except for the text delta:
 * the id, the model, the creation time, the choice index and the null fields repeat. Parsing each
 * one with `JSON.parse` was the largest single cost a stream added (about a tenth of its CPU, see
 * the README's performance section). This remembers a chunk's layout — the bytes before and after
 * its text — and reads a later chunk with the same layout by comparing those bytes and taking the
 * text between them as it is.
 *
 * Nothing here knows a vendor's format. A layout is learned from a chunk that was parsed and
 * decoded the normal way into exactly one text delta and nothing else. Its text must appear in the
 * raw data as `JSON.stringify` writes it; then the layout is proved once by decoding the same
 * bytes with a probe text in that place, which must come back as the probe, whole, in the same
 * choice, with nothing else. A chunk is read through a layout only when its text holds no quote,
 * backslash or control character: such a text means the same characters raw as parsed, and the
 * bytes around it are the proved ones, so `JSON.parse` would have read the same chunk. Anything
 * else (an escape, a finish reason, usage, another field that changed) goes the normal way.
 */
import type { CallPart } from './call-part.js';
import { flat } from './flat-string.js';

/** A chunk decoded the normal way, as a layout's proof needs to see it. */
export interface DecodedDelta {
  /** The choice of the chunk's one text delta, or -1 when the chunk decoded into anything else. */
  choice: number;
  text: string;
}

/** What a chunk that is not a lone text delta decodes to. */
export const notADelta: DecodedDelta = Object.freeze({ choice: -1, text: '' });

/** Decodes one chunk's data the normal way (parse, validate, turn into parts) without side effects. */
export type DecodeDelta = (data: string) => DecodedDelta;

interface Layout {
  before: string;
  after: string;
  /** `before.length + after.length`: a chunk shorter than this cannot match. */
  frame: number;
  choice: number;
}

/** Layouts kept per stream: one per choice in a stream of up to this many choices. */
const maxLayouts = 8;
/** Attempts to learn per stream, so a stream whose chunks never repeat stops paying for them. */
const maxAttempts = 16;
/** The probe's characters cannot stand outside a JSON string, so the probe cannot land elsewhere. */
const probeText = '~probe~';
/** What `scan` finds in a text between a layout's frame. */
const unreadable = -1;
const plainAsciiText = 1;
const otherText = 0;

/**
 * Whether the text holds a quote, a backslash or a control character (`unreadable`: JSON writes
 * those differently from the text itself), and otherwise whether it is all printable ASCII, which
 * the part carries on (`plainAscii`) so the chunk builder does not scan the text again. A loop
 * rather than a regular expression: a delta is a few characters, and the expression's call cost
 * more than the scan (~230 instructions a chunk against ~40). Not the chunk builder's `textKind`:
 * here the text stands between quotes in raw JSON, where a surrogate or any other character above
 * U+007F stands for itself.
 */
function scan(text: string): number {
  let kind = plainAsciiText;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c) return unreadable;
    if (code > 0x7f) kind = otherText;
  }
  return kind;
}

export class RepeatedChunkLayouts {
  private readonly layouts: Layout[] = [];
  private attempts = 0;
  /** The last chunk `readInto` saw had a known layout but a text with escapes: nothing to learn from it. */
  private framed = false;

  /**
   * Reads a chunk that has a learned layout: pushes its text delta (none for an empty text) and
   * returns true. False when the chunk must be decoded the normal way.
   */
  readInto(data: string, out: CallPart[]): boolean {
    this.framed = false;
    const layouts = this.layouts;
    for (let index = 0; index < layouts.length; index++) {
      const layout = layouts[index];
      // Equality of slices rather than startsWith/endsWith: optimised code inlines those as a
      // loop over characters, ~6x slower here than comparing two strings (native, word at a time).
      // `indexOf(before) === 0` was tried too: +5% instructions a stream (for a pattern this long
      // the search first builds its skip table, on every call).
      if (data.length < layout.frame) continue;
      const end = data.length - layout.after.length;
      if (data.slice(0, layout.before.length) !== layout.before || data.slice(end) !== layout.after) continue;
      const text = data.slice(layout.before.length, end);
      const kind = scan(text);
      if (kind === unreadable) {
        this.framed = true; // parsed the normal way; its layout is the one already known
        return false;
      }
      if (text.length > 0) out.push({ type: 'text-delta', choice: layout.choice, text, plainAscii: kind === plainAsciiText });
      return true;
    }
    return false;
  }

  /** False once this stream has used up its attempts: callers can skip preparing `learn`'s arguments. */
  get learning(): boolean {
    return this.attempts < maxAttempts;
  }

  /**
   * After a chunk that `readInto` did not take was decoded the normal way into exactly one text
   * delta (`text` for `choice`) and nothing else.
   */
  learn(data: string, choice: number, text: string, decode: DecodeDelta): void {
    if (this.framed || text.length === 0 || text === probeText || this.attempts >= maxAttempts) return;
    this.attempts++;
    const written = JSON.stringify(text);
    const at = data.indexOf(written);
    if (at < 0 || data.indexOf(written, at + 1) >= 0) return; // absent, or not the only place it could be
    const before = data.slice(0, at + 1);
    const after = data.slice(at + written.length - 1);
    if (!this.proves(before, after, choice, decode)) return;
    const layout: Layout = { before: copied(before), after: copied(after), frame: before.length + after.length, choice };
    const same = this.layouts.findIndex((known) => known.choice === layout.choice);
    if (same >= 0) this.layouts[same] = layout;
    else if (this.layouts.length < maxLayouts) this.layouts.push(layout);
  }

  private proves(before: string, after: string, choice: number, decode: DecodeDelta): boolean {
    try {
      const probe = decode(before + probeText + after);
      return probe.choice === choice && probe.text === probeText;
    } catch {
      return false;
    }
  }
}

/**
 * A flat copy of a slice. The slices point into the whole network read they came from, which may
 * be large (a cached completion can arrive in one read); a layout lives as long as its stream.
 */
function copied(slice: string): string {
  return flat(`${slice} `).slice(0, -1);
}
