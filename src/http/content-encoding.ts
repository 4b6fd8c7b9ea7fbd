/**
 * Request bodies sent with `Content-Encoding: gzip` or `deflate` are decoded before fastify's
 * body parser reads them, so the body limit counts decoded bytes: a small gzip bomb is cut off
 * at the limit with a 413 instead of filling memory. Any other encoding gets a 415 naming it.
 */
import { Transform, type Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import { bodyErrors } from '../errors/gateway-error.js';

/** A preParsing hook: the payload as sent, or decoded from gzip or deflate, at most `limitBytes` of it (the gateway's body limit). */
export function decodeContentEncoding(limitBytes: number) {
  // Callback style: the common plain body passes without a promise.
  return function decodeBody(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: RequestPayload,
    done: (error: Error | null, payload?: RequestPayload) => void,
  ): void {
    const header = request.headers['content-encoding'];
    if (header === undefined || request.is404) {
      done(null, payload);
      return;
    }
    const encodings = header
      .split(',')
      .map((each) => each.trim().toLowerCase())
      .filter((each) => each !== '' && each !== 'identity');
    if (encodings.length === 0) {
      done(null, payload);
      return;
    }
    const [encoding] = encodings;
    if (encodings.length > 1 || !(encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate')) {
      // The client may still be sending a body nobody will read.
      reply.header('connection', 'close');
      done(bodyErrors.unsupportedEncoding(header.trim().slice(0, 64)));
      return;
    }
    done(null, decoded(payload, encoding === 'deflate' ? 'deflate' : 'gzip', limitBytes));
  };
}

/**
 * The decoded body, stopped with a 413 once it passes `limitBytes`. `receivedEncodedLength` is
 * what fastify compares with Content-Length (the bytes on the wire, not the decoded ones).
 */
function decoded(payload: Readable, encoding: 'gzip' | 'deflate', limitBytes: number): RequestPayload {
  const decoder = encoding === 'gzip' ? createGunzip() : createInflate();
  let decodedBytes = 0;
  const limited = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      decodedBytes += chunk.length;
      if (decodedBytes > limitBytes) callback(bodyErrors.tooLarge());
      else callback(null, chunk);
    },
  });
  const output = Object.assign(limited, { receivedEncodedLength: 0 });
  payload.on('data', (chunk: Buffer) => {
    output.receivedEncodedLength += chunk.length;
  });
  decoder.on('error', (error) => output.destroy(bodyErrors.undecodable(encoding, error)));
  // Stop inflating as soon as the body is refused: the rest of a bomb is never expanded.
  output.on('error', () => {
    payload.unpipe(decoder);
    decoder.destroy();
  });
  payload.pipe(decoder).pipe(output);
  return output;
}
