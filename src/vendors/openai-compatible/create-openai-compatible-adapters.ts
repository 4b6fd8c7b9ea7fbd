/**
 * Builds the OpenAI-compatible vendors: the built-in presets and every server the config file
 * declares with `kind: openai-compatible`. A vendor without its key (or, for keyless servers,
 * without its base URL) is not offered; `disabled` says which variable enables it. OpenAI itself
 * is a preset too, built by its own folder (`vendors/openai`) through `createPresetAdapter`. A
 * preset's config slice (`vendors.together`) may tune it.
 */
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import { ConfigError } from '../../config/config.js';
import { createModelCatalogue } from '../shared/model-catalogue.js';
import { requestParams } from '../shared/refusals.js';
import { parseVendorConfig, resolveEndpoint, vendorSliceSchema, vendorSliceShape, type VendorSlice } from '../shared/vendor-config.js';
import { addCreated, type CreatedAdapters } from '../registry.js';
import type { VendorAdapter } from '../types.js';
import { createOpenAICompatibleAdapter } from './openai-compatible-adapter.js';
import { openaiCompatiblePresets } from './openai-compatible-presets.js';
import { presetDefaults, standardPaths, type OpenAICompatiblePreset } from './openai-compatible-preset.js';

/** The config slice of a server the operator declares. */
const declaredSliceSchema = z
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
      .prefault({}),
    /** Parameters the server does not take; requests using them get a 400. */
    unsupported: z.array(z.enum(requestParams).exclude(['prompt'])).default([]),
    /** `always` for servers that send stream usage unasked and reject stream_options. */
    streamUsage: z.enum(['stream_options', 'always']).default('stream_options'),
    seedField: z.enum(['seed', 'random_seed']).default('seed'),
  })
  .strict();

type DeclaredSlice = z.infer<typeof declaredSliceSchema>;

/** Adds the vendors to `created` (returned); `reserved` names belong to other adapters, whose slices are not ours to read. */
export function createOpenAICompatibleAdapters(
  config: Config,
  reserved: ReadonlySet<string>,
  created: CreatedAdapters = { adapters: [], disabled: new Map() },
): CreatedAdapters {
  const presetNames = new Set(openaiCompatiblePresets.map((preset) => preset.name));
  for (const preset of openaiCompatiblePresets) addCreated(created, preset.name, createPresetAdapter(config, preset));
  for (const [name, raw] of Object.entries(config.vendors)) {
    if (presetNames.has(name) || reserved.has(name)) continue;
    if (raw.kind !== 'openai-compatible') {
      throw new ConfigError(`TOLLGATE_CONFIG: vendors.${name}: unknown vendor; declare your own server with kind: openai-compatible`);
    }
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(name))
      throw new ConfigError(`TOLLGATE_CONFIG: vendors.${name}: vendor names are lower-case letters, digits, '.', '_' or '-'`);
    const slice = parseVendorConfig(name, declaredSliceSchema, raw);
    addCreated(created, name, build(config, declaredPreset(name, slice), slice, slice.apiKeyEnv));
  }
  return created;
}

/** The adapter for one built-in preset, or the hint saying which variable enables it. */
export function createPresetAdapter(config: Config, preset: OpenAICompatiblePreset): VendorAdapter | string {
  return build(config, preset, parseVendorConfig(preset.name, vendorSliceSchema, config.vendors[preset.name]), undefined);
}

function build(config: Config, preset: OpenAICompatiblePreset, slice: VendorSlice, keyVariable: string | undefined): VendorAdapter | string {
  const endpoint = resolveEndpoint(config, slice.baseUrl, preset, keyVariable);
  if (!endpoint.offered) return endpoint.hint;
  const catalogue = createModelCatalogue(preset.name, preset.models, slice, {
    nativeCompletions: preset.defaultMode === 'native',
    logprobs: preset.defaultMode === 'native' && preset.native.logprobs,
    exactCounterFor: preset.exactCounterFor,
  });
  return createOpenAICompatibleAdapter({
    preset,
    baseUrl: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    apiKeyVariable: endpoint.apiKey ? endpoint.keyVariable : null,
    apiVersion: endpoint.apiVersion,
    transport: slice,
    catalogue,
  });
}

function declaredPreset(name: string, slice: DeclaredSlice): OpenAICompatiblePreset {
  const unsupported: OpenAICompatiblePreset['unsupported'] = {};
  for (const param of slice.unsupported) unsupported[param] = `the operator declared that '${name}' does not support it`;
  const { n, echo, chatN, ...features } = slice.features;
  return {
    ...presetDefaults,
    name,
    // `my-server` → MY_SERVER_API_KEY, MY_SERVER_BASE_URL.
    envPrefix: name.toUpperCase().replace(/[^A-Z0-9]+/g, '_'),
    defaultBaseUrl: null,
    // A declared server needs a key only when the operator names the variable holding it.
    keyRequired: slice.apiKeyEnv !== undefined,
    auth: slice.auth,
    paths: { native: slice.paths?.completions ?? standardPaths.native, chat: slice.paths?.chat ?? standardPaths.chat },
    defaultMode: slice.completions,
    native: { ...features, nativeN: n, nativeEcho: echo, zeroMaxTokens: false },
    chatN,
    unsupported,
    seedField: slice.seedField,
    streamUsage: slice.streamUsage,
  };
}
