/** GET /v5/models: the models the caller can use, OpenAI list shape plus context window and capabilities. */
import type { FastifyInstance } from 'fastify';
import type { VendorRegistry } from '../vendors/registry.js';

export function registerModelsRoute(app: FastifyInstance, registry: VendorRegistry, aliases: Readonly<Record<string, readonly string[]>>): void {
  const created = Math.floor(Date.now() / 1000);
  app.get('/v5/models', async () => {
    const models = registry.listModels().map((model) => ({
      id: model.id,
      object: 'model' as const,
      created,
      owned_by: model.vendor,
      context_window: model.contextWindow,
      capabilities: { completions: true, streaming: true, logprobs: model.capabilities.logprobs, native_completions: model.capabilities.nativeCompletions },
    }));
    const aliasEntries = Object.entries(aliases).map(([id, targets]) => ({
      id,
      object: 'model' as const,
      created,
      owned_by: 'alias',
      targets: [...targets],
    }));
    return { object: 'list', data: [...models, ...aliasEntries] };
  });
}
