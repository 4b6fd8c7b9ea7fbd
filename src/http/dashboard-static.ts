/** The built dashboard and playground (dist/ui) served as static files at /dashboard/ and /playground/. */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';

/** Where `vite build --config ui/vite.config.ts` writes, whether we run from dist/ or from src/. */
export function defaultUiDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // Compiled: <root>/dist/src/http; from source (tsx and the like): <root>/src/http.
  const packageRoot = basename(resolve(here, '..', '..')) === 'dist' ? resolve(here, '..', '..', '..') : resolve(here, '..', '..');
  return join(packageRoot, 'dist', 'ui');
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

const pageSecurityHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'referrer-policy': 'no-referrer',
};

const notBuiltPage = (uiDir: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tollgate dashboard not built</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1f2937}code{background:#f3f4f6;padding:.1rem .3rem;border-radius:4px}</style></head>
<body><h1>The dashboard has not been built</h1><p>The gateway serves the dashboard from <code>${escapeHtml(uiDir)}</code>, which has no <code>index.html</code>.</p>
<p>Build it with <code>npm run build</code> (or <code>npx vite build --config ui/vite.config.ts</code>) and reload this page. The API under <code>/v5</code> works without it.</p></body></html>`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const fileNotFound = (path: string) =>
  new GatewayError(`No file '${path}' in the dashboard.`, { status: 404, type: 'not_found_error', code: 'file_not_found' });

/** Serves files from `uiDir`: `/dashboard/` is index.html, `/playground/` is playground.html. */
export function registerStaticUi(app: FastifyInstance, uiDir: string): void {
  const root = resolve(uiDir);
  const send = async (reply: FastifyReply, relative: string, shownPath: string) => {
    if (!existsSync(join(root, 'index.html'))) {
      return reply.status(503).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(notBuiltPage(root));
    }
    if (relative.includes('\0')) throw fileNotFound(shownPath);
    const file = resolve(root, `.${sep}${relative}`);
    if (!file.startsWith(root + sep)) throw fileNotFound(shownPath);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) throw fileNotFound(shownPath);
    const type = contentTypes[extname(file).toLowerCase()] ?? 'application/octet-stream';
    // Vite names built assets by content hash, so they never change; pages must be revalidated.
    const immutable = relative.startsWith('assets/');
    reply
      .type(type)
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('x-content-type-options', 'nosniff');
    if (type.startsWith('text/html')) reply.headers(pageSecurityHeaders);
    return reply.send(await readFile(file));
  };
  const redirect = (to: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    return reply.redirect(to + query, 301);
  };

  // A person opening the gateway's address lands on the dashboard; 302, as the root may serve more one day.
  app.get('/', async (_request, reply) => reply.redirect('/dashboard/', 302));
  for (const [page, index] of [
    ['dashboard', 'index.html'],
    ['playground', 'playground.html'],
  ]) {
    app.get(`/${page}`, redirect(`/${page}/`));
    app.get(`/${page}/*`, async (request, reply) => {
      const relative = ((request.params as Record<string, string>)['*'] ?? '').split('?')[0];
      return send(reply, relative === '' ? index : relative, `/${page}/${relative}`);
    });
  }
}
