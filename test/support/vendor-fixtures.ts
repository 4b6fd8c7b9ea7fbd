/**
 * Recorded vendor answers, kept as files under `test/fixtures/<vendor>/`: whole answers as `.json`
 * and streams as `.sse`, the raw text/event-stream bytes exactly as the vendor sends them (Gemini's
 * CRLF framing included). tsc does not copy them, so they are read from the source tree, which the
 * compiled tests (`dist/test/support/`) find three levels up.
 */
import { readFileSync } from 'node:fs';
import type { Reply } from './mock-upstream.js';

const root = new URL('../../../test/fixtures/', import.meta.url);

/** How a recorded answer is played; the status and headers are the HTTP response's, not part of the body. */
export interface FixtureOptions {
  status?: number;
  headers?: Record<string, string>;
  /** Milliseconds between two events of a stream. */
  delayMs?: number;
  /** After the last event the connection stays open, silent. */
  hang?: boolean;
  /** After the last event the connection breaks. */
  destroyAfter?: boolean;
}

/** A fixture's bytes as text, e.g. `fixtureText('openai/completion-stream-n.sse')`. */
export function fixtureText(name: string): string {
  return readFileSync(new URL(name, root), 'utf8');
}

/** A recorded whole answer, parsed. */
export function fixtureJson(name: string): any {
  return JSON.parse(fixtureText(name));
}

/** A recorded stream cut into its events, each with the blank line that ends it (a last, unfinished one as it is). */
export function fixtureEvents(name: string): string[] {
  return splitEvents(fixtureText(name));
}

export function splitEvents(text: string): string[] {
  const events: string[] = [];
  let start = 0;
  for (const match of text.matchAll(/\r?\n\r?\n/g)) {
    const end = match.index + match[0].length;
    events.push(text.slice(start, end));
    start = end;
  }
  if (start < text.length) events.push(text.slice(start));
  return events;
}

/** A recorded answer as a mock upstream's reply: a `.json` body as recorded, a `.sse` stream one event per write. */
export function fixture(name: string, options: FixtureOptions = {}): Reply {
  const { status, headers, ...stream } = options;
  if (name.endsWith('.json')) return { status, headers: { 'content-type': 'application/json', ...headers }, text: fixtureText(name) };
  return { status, headers, chunks: fixtureEvents(name), ...stream };
}
