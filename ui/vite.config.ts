/**
 * Builds the dashboard and playground (two pages, one shared bundle of modules) into dist/ui,
 * which src/http/dashboard-routes.ts serves at /dashboard/ and /playground/.
 * Build: `npx vite build --config ui/vite.config.ts`. Dev: `npx vite --config ui/vite.config.ts`
 * with a gateway on :8080 (the API paths are proxied to it).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const gateway = process.env.TOLLGATE_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root,
  // Every page loads its assets from /dashboard/assets/, so /playground/ needs no copy of them.
  base: '/dashboard/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL('index.html', import.meta.url)),
        playground: fileURLToPath(new URL('playground.html', import.meta.url)),
      },
    },
  },
  server: { proxy: { '/v5': gateway, '/admin': gateway } },
});
