/** `vendor/name` parsing and lookup. The only place that maps a model string to an adapter. */
import { invalidRequest, modelNotFound } from '../errors/gateway-error.js';
import type { ModelInfo, VendorAdapter } from './types.js';

export interface ResolvedModel {
  adapter: VendorAdapter;
  model: ModelInfo;
}

/** What the vendor factories built. */
export interface CreatedAdapters {
  /** The vendors offered. */
  adapters: VendorAdapter[];
  /** Vendors known but not configured → the message saying which variable enables them. */
  disabled: Map<string, string>;
}

/** Records what one vendor's factory returned: its adapter, or the message saying how to enable it. */
export function addCreated(created: CreatedAdapters, name: string, result: VendorAdapter | string): void {
  if (typeof result === 'string') created.disabled.set(name, result);
  else created.adapters.push(result);
}

export interface VendorRegistry {
  /** Throws 400 for a malformed model string and 404 model_not_found for an unknown vendor or model. */
  resolve(model: string): ResolvedModel;
  listModels(): ModelInfo[];
  /** Vendor names with their adapters, for readiness reporting. */
  vendorNames(): string[];
  close(): Promise<void>;
}

/** The lookup over the offered adapters; `disabled` as in CreatedAdapters. */
export function createVendorRegistry(adapters: VendorAdapter[], disabled: ReadonlyMap<string, string> = new Map()): VendorRegistry {
  const byName = new Map<string, VendorAdapter>();
  for (const adapter of adapters) byName.set(adapter.name, adapter);
  return {
    resolve(modelString) {
      const slash = modelString.indexOf('/');
      if (slash <= 0 || slash === modelString.length - 1) {
        throw invalidRequest(`'model' must be 'vendor/name' (for example 'local/tollgate-small'), got '${truncate(modelString)}'.`, 'model', 'invalid_model');
      }
      const vendor = modelString.slice(0, slash);
      const name = modelString.slice(slash + 1);
      const adapter = byName.get(vendor);
      if (!adapter) {
        const hint = disabled.get(vendor);
        if (hint) throw modelNotFound(`The model '${truncate(modelString)}' is not available: ${hint}`);
        throw modelNotFound(
          `The model '${truncate(modelString)}' does not exist: there is no vendor '${truncate(vendor)}'. Offered vendors: ${[...byName.keys()].join(', ') || 'none'}.`,
        );
      }
      const model = adapter.resolveModel(name);
      if (!model) {
        throw modelNotFound(`The model '${truncate(modelString)}' does not exist on vendor '${vendor}'. See GET /v5/models.`);
      }
      return { adapter, model };
    },
    listModels() {
      return adapters.flatMap((adapter) => adapter.listModels());
    },
    vendorNames() {
      return [...byName.keys()];
    },
    async close() {
      await Promise.all(adapters.map((adapter) => adapter.close?.()));
    },
  };
}

function truncate(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
