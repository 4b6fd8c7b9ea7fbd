/**
 * The request schema of POST /v5/completions, with OpenAI's documented types and ranges: it
 * accepts what OpenAI's `/completions` accepts and refuses only what it refuses. The same schema
 * feeds the OpenAPI document. `null` means "not given" for every optional field, as the OpenAI
 * SDKs sometimes send it.
 *
 * Every check carries one of `parameterMessages`, so a client never reads a validation library's
 * wording; each message starts with the parameter's name in quotes.
 */
import { z } from 'zod';

const MAX_PROMPTS = 2048;
/** Token ids as the tokenizer-agnostic schema bounds them; each vendor checks its own vocabulary. */
const MAX_TOKEN_ID = 2 ** 31 - 1;
/**
 * OpenAI's seed is a signed 64-bit integer. JSON numbers arrive as doubles, so the largest int64
 * (2^63 − 1) arrives rounded to 2^63: the bound is inclusive of that double.
 */
export const SEED_MIN = -(2 ** 63);
export const SEED_MAX = 2 ** 63;

/** What each parameter accepts, in our words; the error message for any value it refuses. */
export const parameterMessages = {
  body: 'The request body must be a JSON object.',
  model: "'model' is required and must be a string like 'vendor/name'.",
  prompt: "'prompt' must be a string, a list of 1 to 2048 strings, a token array, or a list of 1 to 2048 token arrays.",
  promptTokens: `'prompt' token arrays must hold at least one token id, each an integer from 0 to ${MAX_TOKEN_ID}.`,
  best_of: "'best_of' must be an integer from 0 to 20.",
  echo: "'echo' must be a boolean.",
  frequency_penalty: "'frequency_penalty' must be a number from -2 to 2.",
  logit_bias: "'logit_bias' must be an object mapping token ids to numbers from -100 to 100.",
  logitBiasKey: "'logit_bias' keys must be token ids written as decimal integers.",
  logitBiasValue: "'logit_bias' values must be numbers from -100 to 100.",
  logitBiasSize: "'logit_bias' may hold at most 1024 tokens.",
  logprobs: "'logprobs' must be an integer from 0 to 5.",
  max_tokens: `'max_tokens' must be an integer from 0 to ${2 ** 31 - 1}.`,
  n: "'n' must be an integer from 1 to 128.",
  presence_penalty: "'presence_penalty' must be a number from -2 to 2.",
  seed: "'seed' must be an integer from -9223372036854775808 to 9223372036854775807.",
  stop: "'stop' must be a string or a list of 1 to 4 strings.",
  stream: "'stream' must be a boolean.",
  stream_options: '\'stream_options\' must be an object like {"include_usage": true}.',
  includeUsage: "'stream_options.include_usage' must be a boolean.",
  includeObfuscation: "'stream_options.include_obfuscation' must be a boolean.",
  suffix: "'suffix' must be a string.",
  temperature: "'temperature' must be a number from 0 to 2.",
  top_p: "'top_p' must be a number from 0 to 1.",
  user: "'user' must be a string of at most 256 characters.",
} as const;

export const integerIn = (error: string, min: number, max: number) => z.number({ error }).int({ error }).min(min, { error }).max(max, { error });

const numberIn = (error: string, min: number, max: number) => z.number({ error }).min(min, { error }).max(max, { error });

const boolean = (error: string) => z.boolean({ error });

const tokenId = integerIn(parameterMessages.promptTokens, 0, MAX_TOKEN_ID);
const tokenArray = z.array(tokenId, { error: parameterMessages.promptTokens }).min(1, { error: parameterMessages.promptTokens });

/** Empty strings are prompts too: OpenAI answers them like any other (one choice per prompt). */
export const promptSchema = z.union([z.string(), z.array(z.string()).min(1).max(MAX_PROMPTS), tokenArray, z.array(tokenArray).min(1).max(MAX_PROMPTS)], {
  error: parameterMessages.prompt,
});

/** Empty strings mean "no stop": `""` and `[""]` are accepted and ignored. */
const stopSchema = z.union([z.string(), z.array(z.string()).min(1).max(4)], { error: parameterMessages.stop });

export const completionRequestSchema = z.strictObject(
  {
    model: z.string({ error: parameterMessages.model }).min(1, { error: parameterMessages.model }),
    /** Absent or null: OpenAI's default prompt, the document-start token. */
    prompt: promptSchema.nullish(),
    /** 0 and 1 mean no ranking. */
    best_of: integerIn(parameterMessages.best_of, 0, 20).nullish(),
    echo: boolean(parameterMessages.echo).nullish(),
    frequency_penalty: numberIn(parameterMessages.frequency_penalty, -2, 2).nullish(),
    logit_bias: z
      .record(z.string().regex(/^(0|[1-9][0-9]{0,9})$/, { error: parameterMessages.logitBiasKey }), numberIn(parameterMessages.logitBiasValue, -100, 100), {
        error: parameterMessages.logit_bias,
      })
      .refine((bias) => Object.keys(bias).length <= 1024, { error: parameterMessages.logitBiasSize })
      .nullish(),
    logprobs: integerIn(parameterMessages.logprobs, 0, 5).nullish(),
    max_tokens: integerIn(parameterMessages.max_tokens, 0, 2 ** 31 - 1).nullish(),
    n: integerIn(parameterMessages.n, 1, 128).nullish(),
    presence_penalty: numberIn(parameterMessages.presence_penalty, -2, 2).nullish(),
    // Not `.int()`: zod bounds that to the safe integers, and seeds span the whole int64 range.
    seed: z
      .number({ error: parameterMessages.seed })
      .multipleOf(1, { error: parameterMessages.seed })
      .min(SEED_MIN, { error: parameterMessages.seed })
      .max(SEED_MAX, { error: parameterMessages.seed })
      .nullish(),
    stop: stopSchema.nullish(),
    stream: boolean(parameterMessages.stream).nullish(),
    stream_options: z
      .strictObject(
        {
          include_usage: boolean(parameterMessages.includeUsage).nullish(),
          include_obfuscation: boolean(parameterMessages.includeObfuscation).nullish(),
        },
        { error: parameterMessages.stream_options },
      )
      .nullish(),
    suffix: z.string({ error: parameterMessages.suffix }).nullish(),
    temperature: numberIn(parameterMessages.temperature, 0, 2).nullish(),
    top_p: numberIn(parameterMessages.top_p, 0, 1).nullish(),
    user: z.string({ error: parameterMessages.user }).max(256, { error: parameterMessages.user }).nullish(),
  },
  { error: parameterMessages.body },
);

export type CompletionRequestBody = z.infer<typeof completionRequestSchema>;
