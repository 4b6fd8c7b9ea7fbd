/**
 * API key format and hashing. A key is `tg_<id>_<secret>`: the id part finds the stored record,
 * the secret part is compared as a SHA-256 hash in constant time. Keys carry 190+ bits of
 * randomness, so a fast hash is the right tool (no password-style stretching needed).
 */
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import type { ApiKey, Storage } from '../storage/types.js';

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters of the alphabet, each uniform (randomInt rejects biased draws). */
function randomToken(length: number): string {
  return Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');
}

export interface GeneratedKey {
  /** The full key, shown to its owner once. */
  key: string;
  /** Stored id, `key_<idpart>`. */
  id: string;
  /** Displayable prefix. */
  prefix: string;
  secretHash: string;
}

export function generateKey(): GeneratedKey {
  const idPart = randomToken(12);
  const secret = randomToken(32);
  return { key: `tg_${idPart}_${secret}`, id: `key_${idPart}`, prefix: `tg_${idPart}`, secretHash: hashSecret(secret) };
}

/** Stores a new key for the account; `key`, the full key, is shown to its owner once. */
export async function issueKey(storage: Storage, accountId: string, name: string | null): Promise<ApiKey & { key: string }> {
  const generated = generateKey();
  const stored = await storage.createKey({ id: generated.id, accountId, name, prefix: generated.prefix, secretHash: generated.secretHash });
  return { ...stored, key: generated.key };
}

const keyPattern = /^tg_([A-Za-z0-9]{12})_([A-Za-z0-9]{32})$/;

/** The stored id and the secret of a presented key, or null when it is not one of ours. */
export function parseKey(raw: string): { id: string; secret: string } | null {
  const match = keyPattern.exec(raw);
  return match ? { id: `key_${match[1]}`, secret: match[2] } : null;
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret with the stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
