/** Validates one vendor's config slice; a typo in the config file stops the start with its path. */
import type { z } from 'zod';
import { ConfigError } from '../../config/config.js';

export function parseVendorConfig<Schema extends z.ZodType>(vendor: string, schema: Schema, slice: unknown): z.infer<Schema> {
  const parsed = schema.safeParse(slice ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.length ? `.${issue.path.join('.')}` : '';
    throw new ConfigError(`TOLLGATE_CONFIG: vendors.${vendor}${path}: ${issue.message}`);
  }
  return parsed.data;
}
