/**
 * What the OpenAI wire format's two streams (completions and chat completions) share: `[DONE]`
 * (after which the body is still read to its end, so the connection goes back to the pool), an
 * error object inside a chunk, the fingerprint sent once, and usage — which may arrive in a
 * dedicated last chunk (include_usage) or, on some servers, cumulatively on several chunks, so the
 * last one seen is yielded once, at the end, never double counted. A missing `[DONE]` is tolerated
 * only when every choice already finished.
 */
import type { CallPart } from '../shared/call-part.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import { malformedUpstream, upstreamStreamError } from '../shared/map-upstream-error.js';
import type { Usage } from '../types.js';

/** The fields every chunk of either stream may carry. */
export interface OpenAICompatibleStreamChunk {
  /** An error the server reports inside a 200 stream. */
  error?: { message?: string | null } | null;
  /** The server's configuration fingerprint, passed on once. */
  system_fingerprint?: string | null;
}

/** How one of the two streams reads its chunks. */
export interface OpenAICompatibleStreamFormat<Chunk extends OpenAICompatibleStreamChunk> {
  /** Parses one event's data (throws the 502 for a chunk in an unexpected shape). */
  parse(data: string): Chunk;
  /** Pushes the chunk's text deltas and finish parts. */
  choices(chunk: Chunk, out: CallPart[]): void;
  /** The chunk's usage, if it carries any. */
  usage(chunk: Chunk): Usage | null;
}

export function openaiCompatibleStreamParts<Chunk extends OpenAICompatibleStreamChunk>(
  vendor: string,
  body: AsyncIterable<Buffer>,
  choiceCount: number,
  format: OpenAICompatibleStreamFormat<Chunk>,
): AsyncGenerator<CallPart[]> {
  let usage: Usage | null = null;
  let fingerprintSent = false;
  const finished = new Set<number>();
  let done = false;
  return decodeSseBody(vendor, body, {
    event({ data }, out) {
      if (done) return;
      if (data === '[DONE]') {
        done = true;
        return;
      }
      const chunk = format.parse(data);
      if (chunk.error) throw upstreamStreamError(vendor, chunk.error.message ?? null);
      if (chunk.system_fingerprint && !fingerprintSent) {
        fingerprintSent = true;
        out.push({ type: 'metadata', systemFingerprint: chunk.system_fingerprint });
      }
      const from = out.length;
      format.choices(chunk, out);
      for (let index = from; index < out.length; index++) {
        const part = out[index];
        if (part.type === 'finish') finished.add(part.choice);
      }
      usage = format.usage(chunk) ?? usage;
    },
    end(out) {
      if (!done && finished.size < choiceCount) throw malformedUpstream(vendor, 'a stream that ended before every choice finished');
      if (usage) out.push({ type: 'usage', usage });
    },
  });
}
