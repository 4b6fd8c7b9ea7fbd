/**
 * The signal that says the client went away. It offers what the request path reads of an
 * AbortSignal (`aborted`, `reason`, `addEventListener`/`removeEventListener('abort')`,
 * `throwIfAborted`) without an AbortController and its EventTarget per request, which cost more
 * than the rest of the cancellation plumbing together. Nothing in the path hands it to a platform
 * API that needs a real AbortSignal: upstream requests get their own Deadline signal.
 */
type AbortEvent = { type: 'abort' };
/** A function, or an object with `handleEvent` (as EventTarget accepts). */
type AbortListener = ((event: AbortEvent) => void) | { handleEvent(event: AbortEvent): void };

export class ClientCancel {
  aborted = false;
  reason: unknown = undefined;
  private listeners: AbortListener[] = [];

  /** Typed as AbortSignal for the adapters; see the class comment for what it supports. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal;
  }

  addEventListener(type: string, listener: AbortListener): void {
    if (type !== 'abort' || this.aborted) return;
    if (!this.listeners.includes(listener)) this.listeners.push(listener);
  }

  removeEventListener(type: string, listener: AbortListener): void {
    if (type !== 'abort') return;
    const index = this.listeners.indexOf(listener);
    if (index >= 0) this.listeners.splice(index, 1);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    const event = { type: 'abort' as const };
    for (const listener of listeners) {
      if (typeof listener === 'function') listener(event);
      else listener.handleEvent(event);
    }
  }
}
