/** The deepest nesting of arrays and objects a request body may have (Bad input). */
export const MAX_JSON_DEPTH = 32;

/** Where a body first nests too deep: the JSON pointer of the array or object that opens level max + 1. */
export interface DepthViolation {
  path: string;
  depth: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** One open container while scanning: arrays count their elements, objects remember their last key. */
interface Frame {
  array: boolean;
  index: number;
  /** Byte range of the current member's key (quotes excluded), -1 before the first one. */
  keyStart: number;
  keyEnd: number;
  /** In an object, the next string is a key (after `{` or `,`), not a value. */
  expectKey: boolean;
}

/**
 * Scans raw JSON bytes, before anything parses them, for nesting deeper than `maxDepth`: JSON.parse,
 * the idempotency fingerprint and the validators all recurse, and a 1 MiB body of `[[[[...` would
 * overflow their stacks. Strings and escapes are skipped (UTF-8 never hides an ASCII byte inside a
 * multi-byte character). Malformed JSON is not judged here: JSON.parse refuses it next.
 * Linear in the body, one pass, no allocation beyond one frame per level up to the limit.
 */
export function findDepthViolation(body: Uint8Array, maxDepth = MAX_JSON_DEPTH): DepthViolation | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < body.length; i += 1) {
    const byte = body[i];
    if (byte === QUOTE) {
      const end = endOfString(body, i);
      const top = stack[stack.length - 1];
      if (top && !top.array && top.expectKey) {
        top.keyStart = i + 1;
        top.keyEnd = end;
        top.expectKey = false;
      }
      i = end;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (stack.length === maxDepth) return { path: pointer(body, stack), depth: maxDepth + 1 };
      stack.push({ array: byte === OPEN_ARRAY, index: 0, keyStart: -1, keyEnd: -1, expectKey: byte === OPEN_OBJECT });
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      stack.pop();
    } else if (byte === COMMA) {
      const top = stack[stack.length - 1];
      if (top?.array) top.index += 1;
      else if (top) top.expectKey = true;
    } else if (byte === COLON) {
      const top = stack[stack.length - 1];
      if (top && !top.array) top.expectKey = false;
    }
  }
  return undefined;
}

/** Index of the quote closing the string that opens at `start` (or the end of the body if it never closes). */
function endOfString(body: Uint8Array, start: number): number {
  for (let i = start + 1; i < body.length; i += 1) {
    if (body[i] === BACKSLASH) i += 1;
    else if (body[i] === QUOTE) return i;
  }
  return body.length;
}

/** JSON pointer (RFC 6901) of the value being opened inside the innermost open container. */
function pointer(body: Uint8Array, stack: Frame[]): string {
  return stack.map((frame) => `/${escapePointer(segment(body, frame))}`).join('');
}

/** Keys longer than this are cut in the pointer: it is quoted back in the problem. */
const MAX_KEY_IN_POINTER = 100;

function segment(body: Uint8Array, frame: Frame): string {
  if (frame.array) return String(frame.index);
  if (frame.keyStart < 0) return '';
  const end = Math.min(frame.keyEnd, frame.keyStart + MAX_KEY_IN_POINTER);
  const raw = Buffer.from(body.subarray(frame.keyStart, end)).toString('utf8');
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

function escapePointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}
