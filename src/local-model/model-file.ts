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
/** A real header is a few KiB; a larger length field means a damaged file. */
const MAXIMUM_HEADER_BYTES = 1 << 20;
const LEVEL_ARRAYS = ['nodeTokens', 'continuationOffsets', 'continuationTokens', 'continuationProbabilities', 'childOffsets'] as const;
const constructors = { Int32Array, Uint32Array, Uint16Array, Float32Array, Float64Array };

type ArrayKind = keyof typeof constructors;
type AnyArray = Int32Array | Uint32Array | Uint16Array | Float32Array | Float64Array;

interface FileHeader {
  formatVersion: number;
  /** The training-setup key the file was built for; a mismatch means the file is stale. */
  key: string;
  order: number;
  levels: Array<{ length: number; nodeCount: number }>;
  arrays: Array<{ name: string; kind: ArrayKind; offset: number; length: number }>;
}

const align = (value: number): number => Math.ceil(value / 8) * 8;

/** Writes atomically (temporary file, then rename) so a crash or a concurrent reader never sees half a file. */
export function writeModelFile(path: string, key: string, data: LocalModelData): void {
  const arrays: Array<[string, AnyArray]> = [
    ['vocabulary', data.vocabulary],
    ['unigram', data.unigram],
    ...data.levels.flatMap((level, index) => LEVEL_ARRAYS.map((name): [string, AnyArray] => [`levels.${index}.${name}`, level[name]])),
  ];
  let offset = 0;
  const entries = arrays.map(([name, array]) => {
    const entry = { name, kind: array.constructor.name as ArrayKind, offset, length: array.length };
    offset = align(offset + array.byteLength);
    return entry;
  });
  const levels = data.levels.map((level) => ({ length: level.length, nodeCount: level.nodeCount }));
  const header: FileHeader = { formatVersion: FORMAT_VERSION, key, order: data.order, levels, arrays: entries };
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
}

/** The header of a file's first bytes, or null when they are not a header of this format and key. */
function parseHeader(start: Buffer, key: string): { header: FileHeader; dataStart: number } | null {
  if (start.length < 12 || start.toString('latin1', 0, 4) !== MAGIC || start.readUInt32LE(4) !== FORMAT_VERSION) return null;
  const headerLength = start.readUInt32LE(8);
  if (start.length < 12 + headerLength) return null;
  try {
    const header = JSON.parse(start.toString('utf8', 12, 12 + headerLength)) as FileHeader;
    return header.key === key ? { header, dataStart: align(12 + headerLength) } : null;
  } catch {
    return null;
  }
}

/** Whether a file of `size` bytes holds every array the header lists, each of a known kind. */
function arraysFit(header: FileHeader, dataStart: number, size: number): boolean {
  return header.arrays.every((entry) => {
    const Constructor = constructors[entry.kind];
    return Constructor !== undefined && dataStart + entry.offset + entry.length * Constructor.BYTES_PER_ELEMENT <= size;
  });
}

/** Whether `path` is a complete model file of this format for `key`, judged by its header alone (checked at start). */
export function modelFileMatches(path: string, key: string): boolean {
  let descriptor: number | null = null;
  try {
    descriptor = openSync(path, 'r');
    const prefix = Buffer.alloc(12);
    const headerLength = readSync(descriptor, prefix, 0, 12, 0) === 12 ? prefix.readUInt32LE(8) : 0;
    if (headerLength > MAXIMUM_HEADER_BYTES) return false;
    const start = Buffer.alloc(12 + headerLength);
    const parsed = parseHeader(start.subarray(0, readSync(descriptor, start, 0, start.length, 0)), key);
    return parsed !== null && arraysFit(parsed.header, parsed.dataStart, fstatSync(descriptor).size);
  } catch {
    return false;
  } finally {
    if (descriptor !== null) closeSync(descriptor);
  }
}

/** The model in the file (views on the one buffer read), or null when it is missing, damaged, stale or of another format. */
export function readModelFile(path: string, key: string): LocalModelData | null {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return null;
  }
  const parsed = parseHeader(file, key);
  if (!parsed || !arraysFit(parsed.header, parsed.dataStart, file.length)) return null;
  // Typed-array views need an aligned base; a fresh copy is aligned, a pooled Buffer slice may not be.
  const bytes = file.byteOffset % 8 === 0 ? file : Buffer.from(file);
  const arrays = new Map<string, AnyArray>();
  for (const { name, kind, offset, length } of parsed.header.arrays) {
    arrays.set(name, new constructors[kind](bytes.buffer as ArrayBuffer, bytes.byteOffset + parsed.dataStart + offset, length));
  }
  const get = <T extends AnyArray>(name: string): T => {
    const array = arrays.get(name);
    if (!array) throw new Error(`The local model file ${path} has no array '${name}'.`);
    return array as T;
  };
  const levels = parsed.header.levels.map(
    ({ length, nodeCount }, index): LocalModelLevel => ({
      length,
      nodeCount,
      nodeTokens: get<Uint16Array>(`levels.${index}.nodeTokens`),
      continuationOffsets: get<Uint32Array>(`levels.${index}.continuationOffsets`),
      continuationTokens: get<Uint16Array>(`levels.${index}.continuationTokens`),
      continuationProbabilities: get<Float32Array>(`levels.${index}.continuationProbabilities`),
      childOffsets: get<Uint32Array>(`levels.${index}.childOffsets`),
    }),
  );
  return { order: parsed.header.order, vocabulary: get<Int32Array>('vocabulary'), unigram: get<Float64Array>('unigram'), levels };
}
