/**
 * Upstream call events (latency to response headers, errors, retries) from the shared vendor code
 * to whoever listens (the metrics). A tiny listener set keeps vendor code free of metric types.
 */
export interface UpstreamListener {
  /** A call got its response headers (or failed): seconds since it started, and the status or error code. */
  call(vendor: string, seconds: number, outcome: string): void;
  retry(vendor: string): void;
}

const listeners = new Set<UpstreamListener>();

export function listenToUpstream(listener: UpstreamListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function reportUpstreamCall(vendor: string, seconds: number, outcome: string): void {
  for (const listener of listeners) listener.call(vendor, seconds, outcome);
}

export function reportUpstreamRetry(vendor: string): void {
  for (const listener of listeners) listener.retry(vendor);
}
