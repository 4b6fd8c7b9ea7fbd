/**
 * Config slices for OpenAI-compatible vendors. A preset's slice (`vendors.together`) may tune it;
 * any other name with `kind: openai-compatible` declares a new server.
 */
import { z } from 'zod';
import { requestParams } from '../shared/refusals.js';
import { vendorSliceShape } from '../shared/vendor-slice.js';

export const declaredSliceSchema = z
  .object({
    ...vendorSliceShape,
    kind: z.literal('openai-compatible'),
    /** Env variable with the key (must end in _API_KEY); when given, the vendor is offered only once it is set. */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Z0-9_]+_API_KEY$/, 'must be an env variable name ending in _API_KEY')
      .optional(),
    auth: z.enum(['bearer', 'api-key']).default('bearer'),
    /** Mode of models not declared in `models`. */
    completions: z.enum(['native', 'chat']).default('native'),
    paths: z
      .object({ completions: z.string().startsWith('/').optional(), chat: z.string().startsWith('/').optional() })
      .strict()
      .optional(),
    /** What the server's native completions endpoint honours beyond the basics (all default false: emulated or refused). */
    features: z
      .object({
        promptList: z.boolean().default(false),
        n: z.boolean().default(false),
        echo: z.boolean().default(false),
        logprobs: z.boolean().default(false),
        tokenPrompts: z.boolean().default(false),
        bestOf: z.boolean().default(false),
        suffix: z.boolean().default(false),
        /** `n` > 1 in one chat call. */
        chatN: z.boolean().default(false),
      })
      .strict()
      .default({ promptList: false, n: false, echo: false, logprobs: false, tokenPrompts: false, bestOf: false, suffix: false, chatN: false }),
    /** Parameters the server does not take; requests using them get a 400. */
    unsupported: z.array(z.enum(requestParams).exclude(['prompt'])).default([]),
    /** `always` for servers that send stream usage unasked and reject stream_options. */
    streamUsage: z.enum(['stream_options', 'always']).default('stream_options'),
    seedField: z.enum(['seed', 'random_seed']).default('seed'),
  })
  .strict();

export type DeclaredSlice = z.infer<typeof declaredSliceSchema>;
