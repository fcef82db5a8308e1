import { gunzipSync, inflateSync } from 'node:zlib';
import type { GeneratedCase } from './variants';

/*
 * How the gateway reads a request before any route looks at it, as both fuzzes' predictions read it
 * (predict.ts for the public API, admin-predict.ts for the admin API): the same JSON body reader and
 * the same router serve both.
 */

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BODY_LIMIT = 1024 * 1024;
const MAX_DEPTH = 32;

/** The body as the gateway's JSON reader reads it, or why it refuses it (a string). */
export function readBody(c: Pick<GeneratedCase<string>, 'headers' | 'body'>): unknown {
  const raw =
    c.body === undefined
      ? undefined
      : 'text' in c.body
        ? Buffer.from(c.body.text)
        : Buffer.from(c.body.base64, 'base64');
  if (raw === undefined || raw.length === 0) return {};
  if (raw.length > BODY_LIMIT) return 'too large';
  const [media, ...params] = (c.headers['content-type'] ?? '')
    .toLowerCase()
    .split(';')
    .map((s) => s.trim());
  if (media !== 'application/json' && !/^application\/[^/]*\+json$/.test(media)) return 'content-type';
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') return 'charset';
  const bytes = decoded(raw, (c.headers['content-encoding'] ?? '').toLowerCase());
  if (typeof bytes === 'string') return bytes;
  if (bytes.length > BODY_LIMIT) return 'too large';
  if (maxDepth(bytes) > MAX_DEPTH) return 'too deep';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'not UTF-8';
  }
  if (text.trim() === '') return {};
  if (!/^[ \t\n\r]*[[{]/.test(text)) return 'not an object or array';
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return 'malformed JSON';
  }
}

/** The bytes under their content coding, or why they cannot be read. */
function decoded(raw: Buffer, coding: string): Buffer | string {
  try {
    if (coding === 'gzip') return gunzipSync(raw);
    if (coding === 'deflate') return inflateSync(raw);
    if (coding === '' || coding === 'identity') return raw;
    return 'content-encoding';
  } catch {
    return 'bad gzip';
  }
}

/** Deepest nesting of arrays and objects, strings skipped (an independent reading of the rule). */
function maxDepth(bytes: Buffer): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i += 1) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i += 1;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) max = Math.max(max, ++depth);
    else if (b === 0x5d || b === 0x7d) depth -= 1;
  }
  return max;
}

/** A path segment decoded as the router decodes it (undecodable: kept as it is). */
export function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
