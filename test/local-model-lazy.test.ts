/**
 * The local model loads on first use: starting, /ready, /v5/models and resolving the model leave it
 * unloaded (it is the largest thing a gateway that only proxies would otherwise hold), the first
 * local completion loads it, and a model that can no longer be loaded answers 503 in the OpenAI
 * error shape instead of crashing the gateway.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';
import { toErrorResponse } from '../src/errors/error-mapper.js';
import { createLogger } from '../src/observability/logger.js';
import { createLocalAdapter, type LocalAdapter } from '../src/vendors/local/local-adapter.js';
import { isLocalModelCached, loadOrTrainLocalModel, locateLocalModel } from '../src/local-model/model-store.js';
import type { ModelInfo } from '../src/vendors/types.js';
import { VendorError } from '../src/errors/vendor-error.js';
import { request } from './support/mock-upstream-helpers.js';
import { get, post, startTestGateway, type TestGateway } from './support/test-gateway.js';

let gateway: TestGateway;

before(async () => {
  // A gateway trains a missing cache at start (so no request waits for training): make sure it
  // finds one, so what it does on a normal start is what is tested.
  const location = locateLocalModel();
  if (!isLocalModelCached(location)) loadOrTrainLocalModel(location);
  gateway = await startTestGateway();
});

after(() => gateway.stop());

test('start, /ready and /v5/models leave the local model unloaded; the first local completion loads it', async () => {
  const local = gateway.server.registry.resolve('local/tollgate-small').adapter as LocalAdapter;
  assert.equal(local.modelLoaded, false);
  assert.equal((await get(gateway, '/ready')).status, 200);
  const models = await get(gateway, '/v5/models');
  assert.ok((models.body.data as Array<{ id: string }>).some((model) => model.id === 'local/tollgate-small'));
  assert.equal(local.modelLoaded, false);

  const completion = await post(gateway, '/v5/completions', { model: 'local/tollgate-small', prompt: 'The state of the Union is', max_tokens: 5, seed: 1 });
  assert.equal(completion.status, 200, completion.text);
  assert.ok(completion.body.usage.completion_tokens <= 5);
  assert.equal(local.modelLoaded, true);
  assert.ok(gateway.logs.some((line) => line.msg === 'local model loaded from cache'));
});

test('a model file damaged after start answers 503 local_model_unavailable in the OpenAI error shape', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-local-lazy-'));
  try {
    const source = locateLocalModel();
    const copy = join(dir, basename(source.path));
    copyFileSync(source.path, copy);
    const adapter = await createLocalAdapter({ logger: createLogger('silent'), cacheDir: dir });
    assert.equal(adapter.modelLoaded, false);
    truncateSync(copy, 4096); // the header survives, the arrays do not

    const model = adapter.resolveModel('tollgate-small') as ModelInfo;
    const generation = request({ model: 'tollgate-small', prompt: 'Hello', stream: false });
    let thrown: unknown = null;
    try {
      adapter.prepare(generation, model);
    } catch (error) {
      thrown = error;
    }
    assert.ok(thrown instanceof VendorError, `expected a VendorError, got ${String(thrown)}`);
    const response = toErrorResponse(thrown);
    assert.equal(response.status, 503);
    assert.equal(response.body.error.type, 'service_unavailable');
    assert.equal(response.body.error.code, 'local_model_unavailable');
    assert.equal(response.body.error.param, null);
    assert.ok(!response.body.error.message.includes(dir), 'the file path stays in the log');
    assert.equal(adapter.modelLoaded, false);
    // Within the retry interval a second request fails the same way without re-reading the file.
    assert.throws(
      () => adapter.prepare(request({ model: 'tollgate-small', prompt: 'Hi', stream: false }), model),
      (error: unknown) => error instanceof VendorError && error.code === 'local_model_unavailable',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
