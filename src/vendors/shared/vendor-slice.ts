/** The config-file slice every vendor accepts (transport settings, base URL and models), and its validation. */
import { z } from 'zod';
import { ConfigError } from '../../config/config.js';
import { transportOptionsShape } from './transport-options.js';

const modelDeclarationSchema = z
  .object({
    name: z.string().min(1).max(256),
    /** Maximum prompt + completion tokens. */
    contextWindow: z.number().int().positive().optional(),
    /** Whether this model has the native completions endpoint or only chat. */
    completions: z.enum(['native', 'chat']).optional(),
    /** Whether the model can return logprobs (native completions only). */
    logprobs: z.boolean().optional(),
  })
  .strict();

export const vendorSliceShape = {
  ...transportOptionsShape,
  /** Overridden by `<PREFIX>_BASE_URL` when that is set. */
  baseUrl: z.url().optional(),
  /** Models to advertise, beyond or instead of the built-in catalogue (context window, native/chat mode). */
  models: z.array(modelDeclarationSchema).default([]),
  /** Pass names not in the catalogue through to the vendor (default true). */
  allowUnlistedModels: z.boolean().default(true),
  /** Context window assumed for unlisted models (default 131072; the vendor enforces its own). */
  unlistedContextWindow: z.number().int().positive().default(131_072),
};

export const vendorSliceSchema = z.object(vendorSliceShape).strict();

export type VendorSlice = z.infer<typeof vendorSliceSchema>;

/** Validates one vendor's config slice; a typo in the config file stops the start with its path. */
export function parseVendorConfig<Schema extends z.ZodType>(vendor: string, schema: Schema, slice: unknown): z.infer<Schema> {
  const parsed = schema.safeParse(slice ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.length ? `.${issue.path.join('.')}` : '';
    throw new ConfigError(`TOLLGATE_CONFIG: vendors.${vendor}${path}: ${issue.message}`);
  }
  return parsed.data;
}
