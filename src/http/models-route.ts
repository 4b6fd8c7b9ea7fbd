/**
 * The models the caller can use, for both SDK families in one answer: OpenAI's list (`data` of
 * `id`, `object`, `created`, `owned_by`, with context window and capabilities) and SGP's (`items` of
 * `model_name`, `model_vendor`, `model_type`). `limit`, `starting_after` and `ending_before` page
 * through both the same way, in catalogue order; without them the whole list.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidRequest } from '../errors/gateway-error.js';
import type { VendorRegistry } from '../vendors/registry.js';
import { parseInput } from './parse-input.js';

/** Other query parameters are ignored, as OpenAI's list endpoints ignore them. */
const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  starting_after: z.string().min(1).optional(),
  ending_before: z.string().min(1).optional(),
});

interface ListedModel {
  id: string;
  /** It answers POST /v5/chat/completions (an alias: one of its targets does). */
  chat: boolean;
  /** OpenAI's entry. */
  openai: Record<string, unknown>;
  /** SGP's entry, without its `model_type`, which the list sets. */
  sgp: Record<string, unknown>;
}

/**
 * GET /v5/models (every model, each also served by /v5/completions) and GET
 * /v5/chat/completions/models (those that answer conversations), in the same two shapes.
 */
export function registerModelsRoute(app: FastifyInstance, registry: VendorRegistry, aliases: Readonly<Record<string, readonly string[]>>): void {
  const created = Math.floor(Date.now() / 1000);
  const catalogue = (): ListedModel[] => {
    const models: ListedModel[] = registry.listModels().map((model) => ({
      id: model.id,
      chat: model.capabilities.chat,
      openai: {
        id: model.id,
        object: 'model',
        created,
        owned_by: model.vendor,
        context_window: model.contextWindow,
        capabilities: {
          completions: true,
          chat: model.capabilities.chat,
          streaming: true,
          logprobs: model.capabilities.logprobs,
          native_completions: model.capabilities.nativeCompletions,
        },
      },
      sgp: { id: model.id, model_name: model.name, model_vendor: model.vendor, context_window: model.contextWindow },
    }));
    for (const [id, targets] of Object.entries(aliases)) {
      models.push({
        id,
        chat: targets.some((target) => answersChat(registry, target)),
        openai: { id, object: 'model', created, owned_by: 'alias', targets: [...targets] },
        sgp: { id, model_name: id, model_vendor: 'alias', targets: [...targets] },
      });
    }
    return models;
  };
  const list = (models: ListedModel[], query: unknown, modelType: 'completion' | 'chat_completion') => {
    const { listed, hasMore } = pageOf(models, parseInput(pageSchema, query ?? {}, 'query'));
    return {
      object: 'list',
      data: listed.map((model) => model.openai),
      items: listed.map((model) => ({ ...model.sgp, model_type: modelType })),
      has_more: hasMore,
      first_id: listed[0]?.id ?? null,
      last_id: listed.at(-1)?.id ?? null,
    };
  };
  app.get('/v5/models', async (request) => list(catalogue(), request.query, 'completion'));
  app.get('/v5/chat/completions/models', async (request) =>
    list(
      catalogue().filter((model) => model.chat),
      request.query,
      'chat_completion',
    ),
  );
}

/** Whether a model an alias names resolves, and answers conversations. */
function answersChat(registry: VendorRegistry, model: string): boolean {
  try {
    return registry.resolve(model).model.capabilities.chat;
  } catch {
    return false;
  }
}

/** The page the cursor asks for: after `starting_after`, or the last ones before `ending_before`; at most `limit`. */
function pageOf(models: ListedModel[], page: z.infer<typeof pageSchema>): { listed: ListedModel[]; hasMore: boolean } {
  if (page.starting_after !== undefined && page.ending_before !== undefined) {
    throw invalidRequest("Give 'starting_after' or 'ending_before', not both.", 'ending_before');
  }
  const indexOf = (id: string, param: string) => {
    const index = models.findIndex((model) => model.id === id);
    if (index < 0) throw invalidRequest(`'${param}' names no model of this list: '${id}'.`, param);
    return index;
  };
  const limit = page.limit ?? models.length;
  if (page.ending_before !== undefined) {
    const end = indexOf(page.ending_before, 'ending_before');
    const start = Math.max(0, end - limit);
    return { listed: models.slice(start, end), hasMore: start > 0 };
  }
  const start = page.starting_after === undefined ? 0 : indexOf(page.starting_after, 'starting_after') + 1;
  return { listed: models.slice(start, start + limit), hasMore: start + limit < models.length };
}
