/**
 * The request schema of POST /v5/completions, with OpenAI's documented types and ranges.
 * The same schema feeds the OpenAPI document. `null` means "not given" for every optional field,
 * as the OpenAI SDKs sometimes send it.
 */
import { z } from 'zod';

const MAX_PROMPTS = 2048;

const integerIn = (param: string, min: number, max: number) =>
  z.number({ error: `'${param}' must be an integer from ${min} to ${max}.` })
    .int({ error: `'${param}' must be an integer from ${min} to ${max}.` })
    .min(min, { error: `'${param}' must be an integer from ${min} to ${max}.` })
    .max(max, { error: `'${param}' must be an integer from ${min} to ${max}.` });

const numberIn = (param: string, min: number, max: number) =>
  z.number({ error: `'${param}' must be a number from ${min} to ${max}.` })
    .min(min, { error: `'${param}' must be a number from ${min} to ${max}.` })
    .max(max, { error: `'${param}' must be a number from ${min} to ${max}.` });

const tokenId = z.number().int().min(0).max(2 ** 31 - 1);
const promptMessage = "'prompt' must be a non-empty string, a list of non-empty strings, a token array, or a list of token arrays.";

export const promptSchema = z.union(
  [
    z.string().min(1),
    z.array(z.string().min(1)).min(1).max(MAX_PROMPTS),
    z.array(tokenId).min(1),
    z.array(z.array(tokenId).min(1)).min(1).max(MAX_PROMPTS),
  ],
  { error: promptMessage },
);

const stopMessage = "'stop' must be a non-empty string or a list of 1 to 4 non-empty strings.";

export const completionRequestSchema = z.strictObject(
  {
    model: z.string({ error: "'model' is required and must be a string like 'vendor/name'." }).min(1, { error: "'model' must not be empty." }),
    prompt: promptSchema,
    best_of: integerIn('best_of', 1, 20).nullish(),
    echo: z.boolean({ error: "'echo' must be a boolean." }).nullish(),
    frequency_penalty: numberIn('frequency_penalty', -2, 2).nullish(),
    logit_bias: z
      .record(
        z.string().regex(/^(0|[1-9][0-9]{0,9})$/, { error: "'logit_bias' keys must be token ids written as decimal integers." }),
        numberIn('logit_bias', -100, 100),
        { error: "'logit_bias' must be an object mapping token ids to numbers from -100 to 100." },
      )
      .refine((bias) => Object.keys(bias).length <= 1024, { error: "'logit_bias' may hold at most 1024 tokens." })
      .nullish(),
    logprobs: integerIn('logprobs', 0, 5).nullish(),
    max_tokens: z
      .number({ error: "'max_tokens' must be a non-negative integer." })
      .int({ error: "'max_tokens' must be a non-negative integer." })
      .min(0, { error: "'max_tokens' must be a non-negative integer." })
      .max(2 ** 31 - 1, { error: "'max_tokens' is too large." })
      .nullish(),
    n: integerIn('n', 1, 128).nullish(),
    presence_penalty: numberIn('presence_penalty', -2, 2).nullish(),
    seed: z
      .number({ error: "'seed' must be an integer." })
      .int({ error: "'seed' must be an integer." })
      .min(Number.MIN_SAFE_INTEGER, { error: "'seed' must be a safe integer." })
      .max(Number.MAX_SAFE_INTEGER, { error: "'seed' must be a safe integer." })
      .nullish(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(4)], { error: stopMessage }).nullish(),
    stream: z.boolean({ error: "'stream' must be a boolean." }).nullish(),
    stream_options: z
      .strictObject(
        { include_usage: z.boolean({ error: "'stream_options.include_usage' must be a boolean." }).nullish() },
        { error: "'stream_options' must be an object like {\"include_usage\": true}." },
      )
      .nullish(),
    suffix: z.string({ error: "'suffix' must be a string." }).nullish(),
    temperature: numberIn('temperature', 0, 2).nullish(),
    top_p: numberIn('top_p', 0, 1).nullish(),
    user: z.string({ error: "'user' must be a string." }).max(256, { error: "'user' must be at most 256 characters." }).nullish(),
  },
  { error: 'The request body must be a JSON object.' },
);

export type CompletionRequestBody = z.infer<typeof completionRequestSchema>;
