/**
 * The completions the route is running, so that shutdown, once its grace period has passed, can end
 * each with an answer (a 503, or an error event ending its stream) before it closes the connections.
 */
export class InFlightCompletions {
  private readonly controllers = new Set<AbortController>();
  private reason: unknown = null;

  /** Follows one request's controller until `delete`; one that comes after `abortAll` is aborted at once. */
  add(controller: AbortController): void {
    if (this.reason !== null) controller.abort(this.reason);
    else this.controllers.add(controller);
  }

  delete(controller: AbortController): void {
    this.controllers.delete(controller);
  }

  /** Aborts every request in flight with `reason`, the error their clients are answered with. */
  abortAll(reason: unknown): void {
    this.reason = reason;
    for (const controller of this.controllers) controller.abort(reason);
    this.controllers.clear();
  }
}
