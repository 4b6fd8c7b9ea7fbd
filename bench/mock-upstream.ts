/**
 * A fast mock of OpenAI's `POST /v1/completions`, run as its own process by the benchmark.
 * Non-stream: one small `text_completion` with usage. Stream: `max_tokens` (default 20) chunks, a usage
 * chunk when `stream_options.include_usage` is set, then `data: [DONE]`, all written at once.
 * A path prefix `/delay-MS/v1/completions` drips one chunk every MS instead, for the slow streams
 * (a prefix, so that a vendor's base URL can carry it).
 * Prints `mock listening on URL` once ready. Env: PORT (default 0).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** Chunks per stream unless `max_tokens` asks for another count (1–1000). */
const defaultChunkCount = 20;
const created = Math.floor(Date.now() / 1000);
const words = [
  'The',
  ' quick',
  ' brown',
  ' fox',
  ' jumps',
  ' over',
  ' the',
  ' lazy',
  ' dog',
  ' and',
  ' keeps',
  ' running',
  ' through',
  ' the',
  ' green',
  ' field',
  ' until',
  ' the',
  ' sun',
  ' sets',
];
const usageFor = (completion: number) => ({ prompt_tokens: 8, completion_tokens: completion, total_tokens: 8 + completion });
const fixedUsage = usageFor(defaultChunkCount);
let sequence = 0;

function completionJson(model: string): string {
  return JSON.stringify({
    id: `cmpl-mock${++sequence}`,
    object: 'text_completion',
    created,
    model,
    system_fingerprint: null,
    choices: [{ text: words.join(''), index: 0, logprobs: null, finish_reason: 'length' }],
    usage: fixedUsage,
  });
}

function streamEvents(model: string, includeUsage: boolean, chunkCount: number): string[] {
  const id = `cmpl-mock${++sequence}`;
  const events: string[] = [];
  for (let index = 0; index < chunkCount; index++) {
    const last = index === chunkCount - 1;
    const chunk = {
      id,
      object: 'text_completion',
      created,
      model,
      choices: [{ text: words[index % words.length], index: 0, logprobs: null, finish_reason: last ? 'length' : null }],
    };
    events.push(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  if (includeUsage) events.push(`data: ${JSON.stringify({ id, object: 'text_completion', created, model, choices: [], usage: usageFor(chunkCount) })}\n\n`);
  events.push('data: [DONE]\n\n');
  return events;
}

// Bodies are built once per shape: the mock shares a core with the load generator, so it must be cheap.
const bodies = new Map<string, string>();
function cached(key: string, build: () => string): string {
  let text = bodies.get(key);
  if (text === undefined) {
    text = build();
    if (bodies.size < 1_000) bodies.set(key, text);
  }
  return text;
}

interface RequestBody {
  model?: unknown;
  stream?: unknown;
  max_tokens?: unknown;
  stream_options?: { include_usage?: unknown } | null;
}

/** The drip interval a path asks for (0: all at once), or null for a path the mock does not serve. */
function delayOf(url: string): number | null {
  const match = /^(?:\/delay-(\d+))?\/v1\/completions$/.exec(url);
  if (!match) return null;
  return Math.min(Number(match[1] ?? 0), 60_000);
}

function drip(response: ServerResponse, events: string[], delayMs: number): void {
  let next = 0;
  const timer = setInterval(() => {
    response.write(events[next++]);
    if (next === events.length) {
      clearInterval(timer);
      response.end();
    }
  }, delayMs);
  response.on('close', () => clearInterval(timer));
}

function handle(request: IncomingMessage, response: ServerResponse, raw: string): void {
  const delayMs = delayOf(request.url ?? '');
  if (request.method !== 'POST' || delayMs === null) {
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","type":"invalid_request_error"}}');
    return;
  }
  let body: RequestBody;
  try {
    body = JSON.parse(raw) as RequestBody;
  } catch {
    response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json","type":"invalid_request_error"}}');
    return;
  }
  const model = typeof body.model === 'string' ? body.model : 'gpt-3.5-turbo-instruct';
  if (body.stream !== true) {
    const text = cached(`json ${model}`, () => completionJson(model));
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    return;
  }
  const wanted = typeof body.max_tokens === 'number' && Number.isInteger(body.max_tokens) ? body.max_tokens : defaultChunkCount;
  const includeUsage = body.stream_options?.include_usage === true;
  const count = Math.min(Math.max(wanted, 1), 1_000);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (delayMs > 0) drip(response, streamEvents(model, includeUsage, count), delayMs);
  else response.end(cached(`sse ${model} ${includeUsage} ${count}`, () => streamEvents(model, includeUsage, count).join('')));
}

const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => handle(request, response, Buffer.concat(parts).toString('utf8')));
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;
server.maxConnections = 4_096;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`mock listening on http://127.0.0.1:${port}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 1_000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
// The benchmark owns this process: exit when it goes away.
process.on('disconnect', () => process.exit(0));
