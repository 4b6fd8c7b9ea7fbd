/** The config-file slice every vendor accepts: transport settings, base URL and models. */
import { z } from 'zod';
import { modelDeclarationSchema } from './model-catalogue.js';
import { transportOptionsShape } from './transport-options.js';

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
