/**
 * The binary cache file of a trained local model: a small JSON header describing typed arrays,
 * followed by the arrays' bytes (8-byte aligned). Loading is one file read plus typed-array views
 * on it, so start-up from the cache costs milliseconds instead of a retraining.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LocalModelData, LocalModelLevel } from './model-data.js';

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

/** The header of a file's first bytes, or null when they are not a header of this format and key. */
function parseHeader(start: Buffer, key: string): { header: FileHeader; dataStart: number } | null {
  if (start.length < 12 || start.toString('latin1', 0, 4) !== MAGIC || start.readUInt32LE(4) !== FORMAT_VERSION) return null;
  const headerLength = start.readUInt32LE(8);
  if (start.length < 12 + headerLength) return null;
  let header: FileHeader;
  try {
    header = JSON.parse(start.toString('utf8', 12, 12 + headerLength)) as FileHeader;
  } catch {
    return null;
  }
  return header.key === key ? { header, dataStart: align(12 + headerLength) } : null;
}

/** A real header is a few KiB; a larger length field means a damaged file. */
const MAXIMUM_HEADER_BYTES = 1 << 20;

/**
 * Whether the file at `path` is a model file of this format built for `key` and long enough for
 * every array its header lists, reading only the header (a few KiB): lets the gateway check its
 * cache at start without loading the model.
 */
export function modelFileMatches(path: string, key: string): boolean {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const prefix = Buffer.alloc(12);
    if (readSync(descriptor, prefix, 0, 12, 0) < 12 || prefix.toString('latin1', 0, 4) !== MAGIC) return false;
    const headerLength = prefix.readUInt32LE(8);
    if (headerLength > MAXIMUM_HEADER_BYTES) return false;
    const start = Buffer.alloc(12 + headerLength);
    const parsed = parseHeader(start.subarray(0, readSync(descriptor, start, 0, start.length, 0)), key);
    if (!parsed) return false;
    const size = fstatSync(descriptor).size;
    return parsed.header.arrays.every((entry) => {
      const Constructor = constructors[entry.kind];
      return Constructor !== undefined && parsed.dataStart + entry.offset + entry.length * Constructor.BYTES_PER_ELEMENT <= size;
    });
  } catch {
    return false;
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Null when the file is missing, unreadable, of another format version, or built for another key.
 * The arrays are views on the one buffer read: the file's bytes are the model, never copied.
 */
export function readModelFile(path: string, key: string): LocalModelData | null {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return null;
  }
  const parsed = parseHeader(file, key);
  if (!parsed) return null;
  const { header, dataStart } = parsed;
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
