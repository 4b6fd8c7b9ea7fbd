/** CORS is off by default; configured origins get allow headers and answered preflights. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestGateway, type TestGateway } from './support/test-gateway.js';

let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway({ TOLLGATE_CORS_ORIGINS: 'https://app.example' });
});
after(() => gateway.stop());

test('a listed origin gets allow headers on requests and preflights', async () => {
  const preflight = await fetch(`${gateway.url}/v5/completions`, {
    method: 'OPTIONS',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example');
  assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /x-api-key/);
  const response = await fetch(`${gateway.url}/v5/models`, { headers: { origin: 'https://app.example', 'x-api-key': gateway.key } });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example');
});

test('an unlisted origin gets nothing', async () => {
  const response = await fetch(`${gateway.url}/v5/models`, { headers: { origin: 'https://evil.example', 'x-api-key': gateway.key } });
  assert.equal(response.headers.get('access-control-allow-origin'), null);
});
