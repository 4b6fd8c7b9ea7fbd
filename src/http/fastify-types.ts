/** Typed request decorations shared by the middleware and the routes. */
import type { Caller } from '../auth/authenticate.js';
import type { CompletionRun } from '../completions/completion-pipeline.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on /v5 routes. */
    caller: Caller | null;
    /** The completion in flight, so the error handler can settle its ledger record exactly once. */
    completionRun: CompletionRun | null;
  }
}

export {};
