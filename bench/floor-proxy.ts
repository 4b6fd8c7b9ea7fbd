/**
 * The floor: the least a gateway can do and still be one. A `node:http` server that checks an API
 * key against a constant, JSON-parses the body, routes on `model` (strips `openai/`), forwards to
 * the upstream through an undici Pool and pipes the response bytes back, streams included. No
 * ledger, no validation, no metrics: Tollgate's figures are read as ratios to this.
 * Env: PORT (default 0), UPSTREAM_URL (required), FLOOR_API_KEY (default `floor-key`).
 * Prints `floor listening on URL` once ready.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const upstreamUrl = new URL(process.env.UPSTREAM_URL ?? '');
const apiKey = process.env.FLOOR_API_KEY ?? 'floor-key';
const basePath = upstreamUrl.pathname.replace(/\/+$/, '');
const pool = new Pool(upstreamUrl.origin, { connections: 256, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
const routes: Record<string, string> = { openai: `${basePath}/v1/completions` };

function fail(response: ServerResponse, status: number, message: string): void {
  const text = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } });
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

function presentedKey(request: IncomingMessage): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string') return header;
  const authorization = request.headers.authorization;
  return authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
}

async function forward(request: IncomingMessage, response: ServerResponse, raw: string): Promise<void> {
  if (presentedKey(request) !== apiKey) return fail(response, 401, 'invalid API key');
  let body: { model?: unknown; stream?: unknown };
  try {
    body = JSON.parse(raw) as { model?: unknown; stream?: unknown };
  } catch {
    return fail(response, 400, 'the body is not JSON');
  }
  if (typeof body.model !== 'string') return fail(response, 400, "'model' is required");
  const slash = body.model.indexOf('/');
  const vendor = slash > 0 ? body.model.slice(0, slash) : 'openai';
  const path = routes[vendor];
  if (!path) return fail(response, 404, `unknown vendor '${vendor}'`);
  body.model = slash > 0 ? body.model.slice(slash + 1) : body.model;
  const abort = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) abort.abort();
  });
  const upstream = await pool.request({
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer mock' },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  const contentType = upstream.headers['content-type'];
  response.writeHead(upstream.statusCode, { 'content-type': typeof contentType === 'string' ? contentType : 'application/json' });
  await pipeline(upstream.body, response);
}

const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    forward(request, response, Buffer.concat(parts).toString('utf8')).catch((error: unknown) => {
      if (!response.headersSent) fail(response, 502, `upstream failed: ${(error as Error).message}`);
      else response.destroy();
    });
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`floor listening on http://127.0.0.1:${port}\n`);
});
const stop = () => {
  server.close(() => {
    void pool.close().finally(() => process.exit(0));
  });
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 1_000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.on('disconnect', () => process.exit(0));
