/**
 * While the server drains for shutdown, a request that still arrives (pipelined, or on a kept-alive
 * connection) gets a 503 in the error shape; fastify has already marked its connection to close.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';

/** Whether the server has begun to shut down (set by the app's preClose hook). */
export interface ClosingState {
  /** True once shutdown has begun. */
  readonly closing: boolean;
}

/** An onRequest hook refusing new work once `state.closing` is set. */
export function refuseWhileClosing(state: ClosingState) {
  return function checkClosing(_request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    if (!state.closing) {
      done();
      return;
    }
    done(
      new GatewayError('The gateway is shutting down; retry on another instance or shortly.', {
        status: 503,
        type: 'service_unavailable',
        code: 'shutting_down',
        headers: { 'retry-after': '1' },
      }),
    );
  };
}
