/**
 * A vendor's configuration: the config-file slice every vendor accepts (transport settings, base
 * URL, models) and where the vendor lives and how it authenticates, from `config.vendorEnv` (never
 * process.env) and that slice. Precedence: `<PREFIX>_BASE_URL` > the slice's `baseUrl` > the
 * vendor default.
 */
import { z } from 'zod';
import { type Config, ConfigError } from '../../config/config.js';
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

/** What resolveEndpoint reads of a vendor: an OpenAI-compatible preset's fields of the same names. */
export interface EndpointSpec {
  name: string;
  envPrefix: string;
  defaultBaseUrl: string | null;
  keyRequired: boolean;
}

export type Endpoint =
  | { offered: true; baseUrl: string; apiKey: string | null; keyVariable: string; apiVersion: string | null }
  | { offered: false; hint: string };

/** @param keyVariable overrides `<PREFIX>_API_KEY` (operator-declared servers) */
export function resolveEndpoint(config: Config, sliceBaseUrl: string | undefined, vendor: EndpointSpec, keyVariable?: string): Endpoint {
  keyVariable ??= `${vendor.envPrefix}_API_KEY`;
  const baseVariable = `${vendor.envPrefix}_BASE_URL`;
  const apiKey = config.vendorEnv[keyVariable] ?? null;
  const baseUrl = config.vendorEnv[baseVariable] ?? sliceBaseUrl ?? vendor.defaultBaseUrl;
  const missing: string[] = [];
  if (vendor.keyRequired && !apiKey) missing.push(keyVariable);
  if (!baseUrl) missing.push(baseVariable);
  if (!baseUrl || missing.length > 0) {
    const what = vendor.keyRequired ? '' : ' (the URL of a server that needs no key)';
    return { offered: false, hint: `set ${missing.join(' and ')}${what} to enable the '${vendor.name}' vendor.` };
  }
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new ConfigError(`${baseVariable} (or vendors.${vendor.name}.baseUrl) is not a URL: '${baseUrl}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${baseVariable}: '${baseUrl}' must be http or https`);
  return { offered: true, baseUrl, apiKey, keyVariable, apiVersion: config.vendorEnv[`${vendor.envPrefix}_API_VERSION`] ?? null };
}
