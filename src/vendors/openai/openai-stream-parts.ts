/**
 * What the OpenAI wire format's two streams (completions and chat completions) share: `[DONE]`
 * (after which the body is still read to its end, so the connection goes back to the pool), an
 * error object inside a chunk, the fingerprint sent once, and usage — which may arrive in a
 * dedicated last chunk (include_usage) or, on some servers, cumulatively on several chunks, so the
 * last one seen is yielded once, at the end, never double counted. A missing `[DONE]` is tolerated
 * only when every choice already finished.
 *
 * A chunk laid out like an earlier one except for its text is read without parsing
 * (`RepeatedChunkLayouts`); every other chunk is parsed and validated.
 */
import type { CallPart } from '../shared/call-part.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import { malformedUpstream, upstreamStreamError } from '../shared/map-upstream-error.js';
import { notADelta, RepeatedChunkLayouts, type DecodedDelta } from '../shared/repeated-chunk-layout.js';
import type { Usage } from '../types.js';

export interface OpenAIStreamChunk {
  error?: { message?: string | null } | null;
  system_fingerprint?: string | null;
}

export interface OpenAIStreamFormat<Chunk extends OpenAIStreamChunk> {
  /** Parses one event's data (throws the 502 for a chunk in an unexpected shape). */
  parse(data: string): Chunk;
  /** Pushes the chunk's text deltas and finish parts. */
  choices(chunk: Chunk, out: CallPart[]): void;
  /** The chunk's usage, if it carries any. */
  usage(chunk: Chunk): Usage | null;
}

export function openaiStreamParts<Chunk extends OpenAIStreamChunk>(vendor: string, body: AsyncIterable<Buffer>, choiceCount: number, format: OpenAIStreamFormat<Chunk>): AsyncIterableIterator<CallPart[]> {
  let usage: Usage | null = null;
  let fingerprintSent = false;
  const finished = new Set<number>();
  let done = false;
  const layouts = new RepeatedChunkLayouts();
  const decode = (data: string): DecodedDelta => {
    const chunk = format.parse(data);
    const parts: CallPart[] = [];
    format.choices(chunk, parts);
    return soleDelta(chunk, parts, 0, format);
  };
  return decodeSseBody(vendor, body, {
    event(event, out) {
      if (done) return;
      const data = event.data;
      if (data === '[DONE]') {
        done = true;
        return;
      }
      if (layouts.readInto(data, out)) return;
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
      if (layouts.learning) {
        const delta = soleDelta(chunk, out, from, format);
        if (delta.choice >= 0) layouts.learn(data, delta.choice, delta.text, decode);
      }
    },
    end(out) {
      if (!done && finished.size < choiceCount) throw malformedUpstream(vendor, 'a stream that ended before every choice finished');
      if (usage) out.push({ type: 'usage', usage });
    },
  });
}

/** The chunk's one text delta (without logprobs) when it decoded into that and nothing else. */
function soleDelta<Chunk extends OpenAIStreamChunk>(chunk: Chunk, parts: CallPart[], from: number, format: OpenAIStreamFormat<Chunk>): DecodedDelta {
  if (parts.length !== from + 1 || chunk.error || format.usage(chunk) !== null) return notADelta;
  const part = parts[from];
  if (part.type !== 'text-delta' || part.logprobs) return notADelta;
  return { choice: part.choice, text: part.text };
}
