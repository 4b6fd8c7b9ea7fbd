/**
 * What identifies a request body for its `Idempotency-Key`: the SHA-256 of the parsed body written
 * out again with every object's keys sorted. Not the raw bytes: a client's retry may reorder keys,
 * change whitespace or compress the body differently, and the gateway answers the parsed body, so
 * two bodies that parse to the same value are the same request.
 */
import { createHash } from 'node:crypto';
import { idempotencyErrors } from '../errors/gateway-error.js';

/** Hex SHA-256 of the body's canonical JSON; a 400 for a body nested too deeply to write out. */
export function requestFingerprint(body: unknown): string {
  let canonical: string;
  try {
    canonical = JSON.stringify(body, sortKeys) ?? 'null';
  } catch {
    // Only a stack overflow gets here: the body was parsed from JSON, so it has no cycles or BigInts.
    throw idempotencyErrors.tooDeep();
  }
  return createHash('sha256').update(canonical).digest('hex');
}

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) Object.defineProperty(sorted, key, { value: (value as Record<string, unknown>)[key], enumerable: true });
  return sorted;
}
