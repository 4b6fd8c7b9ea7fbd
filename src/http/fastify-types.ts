/** Typed request decorations shared by the middleware and the routes. */
import type { Caller } from '../auth/authenticate.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on /v5 routes. */
    caller: Caller | null;
  }
}
