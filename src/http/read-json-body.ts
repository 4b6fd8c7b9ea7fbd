/**
 * Reads a JSON request body the way fastify's default JSON parser does — the same byte limit
 * (declared and received), Content-Length check, empty-body and invalid-JSON errors, and
 * `secure-json-parse` refusing `__proto__` and `constructor.prototype` keys — for the route that
 * bypasses fastify (completions-edge.ts). Errors are the shared `bodyErrors`.
 */
import type { IncomingMessage } from 'node:http';
import secureJsonParse from 'secure-json-parse';
import { bodyErrors, type GatewayError } from '../errors/gateway-error.js';

const parseOptions = { protoAction: 'error', constructorAction: 'error' } as const;

export type BodyCallback = (error: GatewayError | null, body?: unknown) => void;

/** Calls back once: with the parsed body, or with the error to answer (the connection should then close). */
export function readJsonBody(request: IncomingMessage, limit: number, callback: BodyCallback): void {
  const declared = Number(request.headers['content-length']);
  if (declared > limit) {
    callback(bodyErrors.tooLarge());
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  const stop = () => {
    request.off('data', onData);
    request.off('end', onEnd);
    request.off('error', onError);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) {
      stop();
      callback(bodyErrors.tooLarge());
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    stop();
    if (!Number.isNaN(declared) && received !== declared) return callback(bodyErrors.lengthMismatch());
    if (received === 0) return callback(bodyErrors.empty());
    const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, received).toString('utf8');
    let body: unknown;
    try {
      body = secureJsonParse.parse(text, undefined, parseOptions);
    } catch {
      return callback(bodyErrors.invalidJson());
    }
    callback(null, body);
  };
  // The client went away mid-body: nobody will read the answer, but the request still settles once.
  const onError = (error: Error) => {
    stop();
    callback(bodyErrors.unreadable(error));
  };
  request.on('data', onData);
  request.on('end', onEnd);
  request.on('error', onError);
}
