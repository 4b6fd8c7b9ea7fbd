/**
 * Where a vendor lives and how it authenticates, from `config.vendorEnv` (never process.env) and
 * its config slice. Precedence: `<PREFIX>_BASE_URL` > the slice's `baseUrl` > the vendor default.
 */
import { ConfigError } from '../../config/config.js';

export interface EndpointInput {
  vendor: string;
  vendorEnv: Readonly<Record<string, string>>;
  envPrefix: string;
  /** Overrides `<PREFIX>_API_KEY` (operator-declared servers). */
  keyVariable?: string;
  sliceBaseUrl?: string;
  defaultBaseUrl: string | null;
  keyRequired: boolean;
}

export type Endpoint =
  | { offered: true; baseUrl: string; apiKey: string | null; keyVariable: string; apiVersion: string | null }
  | { offered: false; hint: string };

export function resolveEndpoint(input: EndpointInput): Endpoint {
  const keyVariable = input.keyVariable ?? `${input.envPrefix}_API_KEY`;
  const baseVariable = `${input.envPrefix}_BASE_URL`;
  const apiKey = input.vendorEnv[keyVariable] ?? null;
  const baseUrl = input.vendorEnv[baseVariable] ?? input.sliceBaseUrl ?? input.defaultBaseUrl;
  const missing: string[] = [];
  if (input.keyRequired && !apiKey) missing.push(keyVariable);
  if (!baseUrl) missing.push(baseVariable);
  if (!baseUrl || missing.length > 0) {
    const what = input.keyRequired ? '' : ' (the URL of a server that needs no key)';
    return { offered: false, hint: `set ${missing.join(' and ')}${what} to enable the '${input.vendor}' vendor.` };
  }
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new ConfigError(`${baseVariable} (or vendors.${input.vendor}.baseUrl) is not a URL: '${baseUrl}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${baseVariable}: '${baseUrl}' must be http or https`);
  return { offered: true, baseUrl, apiKey, keyVariable, apiVersion: input.vendorEnv[`${input.envPrefix}_API_VERSION`] ?? null };
}
