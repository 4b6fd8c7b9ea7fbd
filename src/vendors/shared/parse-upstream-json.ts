/** Upstream bytes go through a tolerant zod schema; anything else is a 502 naming the vendor, never a crash. */
import type { z } from 'zod';
import { malformedUpstream } from './map-upstream-error.js';

/** `text` parsed and checked against `schema`; `what` names it in the 502 ('a completion', 'a broken stream chunk'). */
export function parseUpstreamJson<Schema extends z.ZodType>(vendor: string, schema: Schema, text: string, what: string): z.infer<Schema> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw malformedUpstream(vendor, `${what} that is not JSON`, error);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw malformedUpstream(vendor, `${what} in an unexpected shape`, parsed.error);
  return parsed.data;
}

/** For error bodies: never throws, returns null when the text is not JSON of that shape. */
export function tryParseJson<Schema extends z.ZodType>(schema: Schema, text: string): z.infer<Schema> | null {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
