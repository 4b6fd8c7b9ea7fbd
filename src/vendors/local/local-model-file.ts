/**
 * The binary cache file of a trained local model: a small JSON header describing typed arrays,
 * followed by the arrays' bytes (8-byte aligned). Loading is one file read plus typed-array views
 * on it, so start-up from the cache costs milliseconds instead of a retraining.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LocalModelData, LocalModelLevel } from './local-model-data.js';

const MAGIC = 'TGLM';
const FORMAT_VERSION = 1;

type ArrayKind = 'Int32Array' | 'Uint32Array' | 'Uint16Array' | 'Float32Array' | 'Float64Array';
type AnyArray = Int32Array | Uint32Array | Uint16Array | Float32Array | Float64Array;

interface ArrayEntry {
  name: string;
  kind: ArrayKind;
  offset: number;
  length: number;
}

interface FileHeader {
  formatVersion: number;
  /** The training-setup key the file was built for; a mismatch means the file is stale. */
  key: string;
  order: number;
  levels: Array<{ length: number; nodeCount: number }>;
  arrays: ArrayEntry[];
}

const constructors = { Int32Array, Uint32Array, Uint16Array, Float32Array, Float64Array };

function kindOf(array: AnyArray): ArrayKind {
  return array.constructor.name as ArrayKind;
}

function namedArrays(data: LocalModelData): Array<[string, AnyArray]> {
  const arrays: Array<[string, AnyArray]> = [
    ['vocabulary', data.vocabulary],
    ['unigram', data.unigram],
  ];
  data.levels.forEach((level, index) => {
    arrays.push([`levels.${index}.nodeTokens`, level.nodeTokens]);
    arrays.push([`levels.${index}.continuationOffsets`, level.continuationOffsets]);
    arrays.push([`levels.${index}.continuationTokens`, level.continuationTokens]);
    arrays.push([`levels.${index}.continuationProbabilities`, level.continuationProbabilities]);
    arrays.push([`levels.${index}.childOffsets`, level.childOffsets]);
  });
  return arrays;
}

const align = (value: number): number => Math.ceil(value / 8) * 8;

/** Writes atomically (temporary file, then rename) so a crash or a concurrent reader never sees half a file. */
export function writeModelFile(path: string, key: string, data: LocalModelData): number {
  const arrays = namedArrays(data);
  let offset = 0;
  const entries: ArrayEntry[] = arrays.map(([name, array]) => {
    const entry = { name, kind: kindOf(array), offset, length: array.length };
    offset = align(offset + array.byteLength);
    return entry;
  });
  const header: FileHeader = {
    formatVersion: FORMAT_VERSION,
    key,
    order: data.order,
    levels: data.levels.map((level) => ({ length: level.length, nodeCount: level.nodeCount })),
    arrays: entries,
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const dataStart = align(12 + headerBytes.length);
  const file = Buffer.alloc(dataStart + offset);
  file.write(MAGIC, 0, 'latin1');
  file.writeUInt32LE(FORMAT_VERSION, 4);
  file.writeUInt32LE(headerBytes.length, 8);
  headerBytes.copy(file, 12);
  arrays.forEach(([, array], index) => {
    Buffer.from(array.buffer, array.byteOffset, array.byteLength).copy(file, dataStart + entries[index].offset);
  });
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, file);
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
  return file.length;
}

/** Null when the file is missing, unreadable, of another format version, or built for another key. */
export function readModelFile(path: string, key: string): LocalModelData | null {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return null;
  }
  if (file.length < 12 || file.toString('latin1', 0, 4) !== MAGIC || file.readUInt32LE(4) !== FORMAT_VERSION) return null;
  const headerLength = file.readUInt32LE(8);
  let header: FileHeader;
  try {
    header = JSON.parse(file.toString('utf8', 12, 12 + headerLength)) as FileHeader;
  } catch {
    return null;
  }
  if (header.key !== key) return null;
  const dataStart = align(12 + headerLength);
  // Typed-array views need an aligned base; a fresh copy is aligned, a pooled Buffer slice may not be.
  const bytes = file.byteOffset % 8 === 0 ? file : Buffer.from(file);
  const arrays = new Map<string, AnyArray>();
  for (const entry of header.arrays) {
    const Constructor = constructors[entry.kind];
    const start = bytes.byteOffset + dataStart + entry.offset;
    if (start + entry.length * Constructor.BYTES_PER_ELEMENT > bytes.byteOffset + bytes.length) return null;
    arrays.set(entry.name, new Constructor(bytes.buffer as ArrayBuffer, start, entry.length));
  }
  const get = <T extends AnyArray>(name: string): T => {
    const array = arrays.get(name);
    if (!array) throw new Error(`The local model file ${path} has no array '${name}'.`);
    return array as T;
  };
  const levels: LocalModelLevel[] = header.levels.map((level, index) => ({
    length: level.length,
    nodeCount: level.nodeCount,
    nodeTokens: get<Uint16Array>(`levels.${index}.nodeTokens`),
    continuationOffsets: get<Uint32Array>(`levels.${index}.continuationOffsets`),
    continuationTokens: get<Uint16Array>(`levels.${index}.continuationTokens`),
    continuationProbabilities: get<Float32Array>(`levels.${index}.continuationProbabilities`),
    childOffsets: get<Uint32Array>(`levels.${index}.childOffsets`),
  }));
  return { order: header.order, vocabulary: get<Int32Array>('vocabulary'), unigram: get<Float64Array>('unigram'), levels };
}
