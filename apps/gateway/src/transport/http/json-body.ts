import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { Next } from 'koa';
import { ServiceError } from '@payments/contracts';
import type { GatewayContext } from './context';
import { findDepthViolation, MAX_JSON_DEPTH } from './json-depth';

/** What a request's body read is bounded by. */
export interface JsonBodyLimits {
  /** Bytes after decompression (BODY_LIMIT_BYTES). */
  bodyLimitBytes: number;
  /** How long the whole body may take to arrive (REQUEST_TIMEOUT_MS): a trickling client is cut off. */
  requestTimeoutMs: number;
}

/** JSON whitespace, then an object or an array (co-body's strict mode, which this replaces). */
const STRICT_START = /^[ \t\n\r]*[[{]/;

/**
 * Reads a JSON body, refusing before anything else reads it: 413 when Content-Length
 * announces more than the limit (before reading a byte) or when the stream exceeds it, 408 when it
 * does not arrive within the request timeout, 415 for a body that is not (UTF-8) JSON, 400 for
 * malformed JSON, for a top level that is not an object or array, and for nesting deeper than 32
 * levels (checked on the raw bytes, before JSON.parse: the parser, the idempotency fingerprint and
 * the validators all recurse). No body is `{}`.
 */
export function jsonBody(limits: JsonBodyLimits) {
  return async (ctx: GatewayContext, next: Next) => {
    const announced = Number(ctx.get('content-length') || 0);
    if (announced > limits.bodyLimitBytes) throw tooLarge(limits.bodyLimitBytes);
    if (!hasBody(ctx)) {
      setBody(ctx, {});
      return next();
    }
    if (!ctx.is('application/json', 'application/*+json'))
      throw new ServiceError('unsupported_media_type', 'send the body as application/json');
    const charset = (ctx.request.charset || 'utf-8').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8')
      throw new ServiceError('unsupported_media_type', `send the body as UTF-8 JSON, not ${charset}`);
    const raw = await readBody(ctx, limits);
    setBody(ctx, parseJson(raw));
    return next();
  };
}

export function requestBody(ctx: GatewayContext): unknown {
  return (ctx.request as { body?: unknown }).body;
}

function setBody(ctx: GatewayContext, body: unknown): void {
  (ctx.request as { body?: unknown }).body = body;
}

function hasBody(ctx: GatewayContext): boolean {
  return Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
}

function tooLarge(limit: number): ServiceError {
  return new ServiceError('payload_too_large', `the request body is larger than ${limit} bytes`);
}

/** Depth on the raw bytes first, then the parse; the text must be UTF-8 and start an object or array. */
export function parseJson(raw: Buffer): unknown {
  const deep = findDepthViolation(raw, MAX_JSON_DEPTH);
  if (deep)
    throw new ServiceError(
      'malformed_json',
      `the request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
      [{ path: deep.path, message: `opens level ${deep.depth}; at most ${MAX_JSON_DEPTH} are allowed` }],
    );
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(raw);
  } catch {
    throw new ServiceError('malformed_json', 'the request body is not valid UTF-8');
  }
  if (text.trim() === '') return {};
  if (!STRICT_START.test(text))
    throw new ServiceError('malformed_json', 'the request body is not valid JSON (an object or an array)');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ServiceError('malformed_json', 'the request body is not valid JSON (an object or an array)');
  }
}

/**
 * The body as sent (gzip and deflate undone), within the size limit and the deadline. Read here, not
 * with koa-bodyparser/co-body (raw-body): those have no deadline for the whole body, so a client
 * trickling a byte at a time held the request open; and they parse before the depth check can run.
 */
async function readBody(ctx: GatewayContext, limits: JsonBodyLimits): Promise<Buffer> {
  const source = decoded(ctx.req, ctx.get('content-encoding'));
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise<Buffer>((resolve, reject) => {
    const finish = (err: ServiceError | undefined, body?: Buffer) => {
      clearTimeout(timer);
      source.off('data', onData).off('end', onEnd).off('error', onError).on('error', ignore);
      if (err) {
        // Stop reading what is left: the answer closes the connection instead of draining it.
        ctx.set('connection', 'close');
        if (source !== ctx.req) source.destroy();
        ctx.req.pause();
        reject(err);
      } else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.bodyLimitBytes) finish(tooLarge(limits.bodyLimitBytes));
      else chunks.push(chunk);
    };
    const onEnd = () => finish(undefined, Buffer.concat(chunks, size));
    const onError = () =>
      finish(new ServiceError('malformed_json', 'the request body could not be read (aborted or badly encoded)'));
    const timer = setTimeout(
      () =>
        finish(
          new ServiceError(
            'request_timeout',
            `the request body did not arrive within ${limits.requestTimeoutMs} ms; send the request again`,
          ),
        ),
      limits.requestTimeoutMs,
    );
    source.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

const ignore = () => undefined;

function decoded(req: IncomingMessage, encoding: string): Readable {
  switch (encoding.trim().toLowerCase()) {
    case '':
    case 'identity':
      return req;
    case 'gzip':
    case 'x-gzip':
      return req.pipe(createGunzip());
    case 'deflate':
      return req.pipe(createInflate());
    default:
      throw new ServiceError('unsupported_media_type', `content-encoding ${encoding} is not supported (gzip, deflate)`);
  }
}
