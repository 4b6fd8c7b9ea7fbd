/** Listeners told when this process revoked a key, so caches of validated keys drop it at once. */
export class KeyWatchers {
  private readonly listeners = new Set<(keyId: string) => void>();

  watch(listener: (keyId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  revoked(keyId: string): void {
    for (const listener of this.listeners) listener(keyId);
  }
}
