/**
 * The floor's work on Tollgate's own HTTP stack: the same key check, routing on `model`, undici Pool
 * and piped answer as `floor-proxy.ts`, but in a fastify route whose body fastify reads and parses.
 * Run with `--targets direct,floor,stack,tollgate`, it splits what Tollgate costs over the floor
 * into what its HTTP stack costs and what the product does on top.
 * Env: PORT (default 0), UPSTREAM_URL (required), FLOOR_API_KEY (default `floor-key`).
 * Prints `stack floor listening on URL` once ready.
 */
import Fastify from 'fastify';
import { Pool } from 'undici';

const upstreamUrl = new URL(process.env.UPSTREAM_URL ?? '');
const apiKey = process.env.FLOOR_API_KEY ?? 'floor-key';
const basePath = upstreamUrl.pathname.replace(/\/+$/, '');
const pool = new Pool(upstreamUrl.origin, { connections: 256, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
const routes: Record<string, string> = { openai: `${basePath}/v1/completions` };

const app = Fastify({ logger: false, keepAliveTimeout: 120_000 });

const fail = (message: string) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } });

app.post('/v1/completions', async (request, reply) => {
  const header = request.headers['x-api-key'];
  const authorization = request.headers.authorization;
  const key = typeof header === 'string' ? header : authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
  if (key !== apiKey) return reply.code(401).send(fail('invalid API key'));
  const body = (request.body ?? {}) as { model?: unknown };
  if (typeof body.model !== 'string') return reply.code(400).send(fail("'model' is required"));
  const model = body.model;
  const slash = model.indexOf('/');
  const vendor = slash > 0 ? model.slice(0, slash) : 'openai';
  const path = routes[vendor];
  if (!path) return reply.code(404).send(fail(`unknown vendor '${vendor}'`));
  body.model = slash > 0 ? model.slice(slash + 1) : model;
  const abort = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const upstream = await pool.request({
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer mock' },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  const contentType = upstream.headers['content-type'];
  return reply
    .code(upstream.statusCode)
    .header('content-type', typeof contentType === 'string' ? contentType : 'application/json')
    .send(upstream.body);
});

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`stack floor listening on ${address}\n`);

const stop = () => {
  void app
    .close()
    .then(() => pool.close())
    .finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 1_000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.on('disconnect', () => process.exit(0));
