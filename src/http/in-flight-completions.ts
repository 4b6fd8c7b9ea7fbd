/**
 * The completions the route is running, so that shutdown, once its grace period has passed, can end
 * each with an answer (a 503, or an error event ending its stream) before it closes the connections.
 */
export class InFlightCompletions {
  // A plain object keyed by completion id, not a Set or Map that every request passes through
  // (docs/performance.md, "Objects that outlive their request").
  private controllers: Record<string, AbortController> = Object.create(null);
  private reason: unknown = null;

  /** Follows one request's controller until `delete`; one that comes after `abortAll` is aborted at once. */
  add(id: string, controller: AbortController): void {
    if (this.reason !== null) controller.abort(this.reason);
    else this.controllers[id] = controller;
  }

  delete(id: string): void {
    delete this.controllers[id];
  }

  /** Aborts every request in flight with `reason`, the error their clients are answered with. */
  abortAll(reason: unknown): void {
    this.reason = reason;
    for (const controller of Object.values(this.controllers)) controller.abort(reason);
    this.controllers = Object.create(null);
  }
}
