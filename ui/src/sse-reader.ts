/**
 * Reads server-sent events from a fetch body with a ReadableStream reader. Yields comments
 * (`: ping` keep-alives) as well as events, so the page can show that the stream is alive.
 */
export type SseItem = { kind: 'event'; event: string | null; data: string } | { kind: 'comment'; text: string };

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseItem> {
  // The DOM typings disagree on BufferSource vs Uint8Array here; the runtime types match.
  const decoder = new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>;
  const reader = body.pipeThrough(decoder).getReader();
  let buffer = '';
  let event: string | null = null;
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const rawLine of lines) {
        const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
        if (line === '') {
          if (data.length > 0 || event !== null) yield { kind: 'event', event, data: data.join('\n') };
          event = null;
          data = [];
          continue;
        }
        if (line.startsWith(':')) {
          yield { kind: 'comment', text: line.slice(1).trim() };
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let fieldValue = colon === -1 ? '' : line.slice(colon + 1);
        if (fieldValue.startsWith(' ')) fieldValue = fieldValue.slice(1);
        if (field === 'event') event = fieldValue;
        else if (field === 'data') data.push(fieldValue);
        // `id` and `retry` do not matter for a one-shot completion stream.
      }
    }
    if (data.length > 0) yield { kind: 'event', event, data: data.join('\n') };
  } finally {
    // Stopping early (the consumer broke out) must close the connection, not just drop the reader.
    await reader.cancel().catch(() => undefined);
  }
}
