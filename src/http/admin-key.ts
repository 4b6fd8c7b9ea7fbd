/** The admin key guard for /admin routes (TOLLGATE_ADMIN_KEY). */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { presentedKey } from '../auth/authenticate.js';
import { GatewayError } from '../errors/gateway-error.js';

export interface AdminKeyOptions {
  /** The key that opens the admin routes. */
  adminKey: string;
}

/** An onRequest hook that admits only the admin key (constant-time compare of SHA-256 digests). */
export function requireAdminKey(options: AdminKeyOptions) {
  const expected = createHash('sha256').update(options.adminKey).digest();
  return async function checkAdminKey(request: FastifyRequest): Promise<void> {
    const presented = presentedKey(request.headers);
    const digest = createHash('sha256')
      .update(presented ?? '')
      .digest();
    if (!presented || !timingSafeEqual(digest, expected)) {
      throw new GatewayError('Admin endpoints need the admin key.', { status: 401, type: 'authentication_error', code: 'invalid_admin_key' });
    }
  };
}
