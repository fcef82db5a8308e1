import { ServiceError } from '@payments/contracts';
import { parseJson } from '../src/transport/http/json-body';
import { findDepthViolation, MAX_JSON_DEPTH } from '../src/transport/http/json-depth';

const bytes = (s: string) => Buffer.from(s, 'utf8');
const nested = (levels: number, open = '[', close = ']') => `${open.repeat(levels)}${close.repeat(levels)}`;

describe('findDepthViolation', () => {
  it('allows 32 levels and refuses the 33rd, naming where it opens', () => {
    expect(MAX_JSON_DEPTH).toBe(32);
    expect(findDepthViolation(bytes(nested(32)))).toBeUndefined();
    expect(findDepthViolation(bytes(nested(33)))).toEqual({ path: '/0'.repeat(32), depth: 33 });
  });

  it('names array indexes and object keys, escaped as a JSON pointer', () => {
    const deep = `${'['.repeat(30)}1${']'.repeat(30)}`;
    const body = `[{"a":1},{"x":[], "we/ird~\\"key\\u00e9": [0, 1, ${deep}]}]`;
    expect(findDepthViolation(bytes(body))).toEqual({ path: '/1/we~1ird~0"keyé/2' + '/0'.repeat(29), depth: 33 });
  });

  it('skips brackets, quotes and backslashes inside strings', () => {
    const tricky = JSON.stringify({ s: '[[[[{{{{"\\', t: '\\"[' }).repeat(1);
    expect(findDepthViolation(bytes(tricky), 1)).toBeUndefined();
    expect(findDepthViolation(bytes(`["${'['.repeat(100)}"]`), 1)).toBeUndefined();
    expect(findDepthViolation(bytes(`{"${'{'.repeat(100)}": 1}`), 1)).toBeUndefined();
    expect(findDepthViolation(bytes('["\\\\", [1]]'), 1)).toEqual({ path: '/1', depth: 2 });
  });

  it('counts depth, not size: many shallow siblings pass', () => {
    expect(
      findDepthViolation(bytes(JSON.stringify(Array.from({ length: 10_000 }, () => [[{ a: [1] }]])))),
    ).toBeUndefined();
  });

  it('is not fooled by multi-byte characters or a string that never closes', () => {
    expect(findDepthViolation(bytes(`["é${'['.repeat(50)}`))).toBeUndefined();
    expect(findDepthViolation(bytes(`["\u{1F600}", ${nested(32)}]`))).toEqual({
      path: '/1' + '/0'.repeat(31),
      depth: 33,
    });
  });

  it('scans 1 MiB of nesting quickly, stopping at level 33', () => {
    const started = performance.now();
    expect(findDepthViolation(bytes('['.repeat(1024 * 1024)))?.depth).toBe(33);
    const wide = bytes(`[${'"abc\\"def",1,{"k":[true,null]},'.repeat(34_000)}1]`);
    expect(wide.length).toBeGreaterThan(1_000_000);
    expect(findDepthViolation(wide)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('parseJson', () => {
  const refusal = (raw: string | Buffer) => {
    try {
      parseJson(typeof raw === 'string' ? bytes(raw) : raw);
    } catch (err) {
      return err instanceof ServiceError ? { code: err.code, errors: err.errors } : err;
    }
    return undefined;
  };

  it('refuses deep nesting before parsing, as malformed_json naming the path', () => {
    expect(refusal('['.repeat(1024 * 1024))).toEqual({
      code: 'malformed_json',
      errors: [{ path: '/0'.repeat(32), message: 'opens level 33; at most 32 are allowed' }],
    });
  });

  it('parses objects and arrays, reads an empty body as {}, refuses scalars, bad JSON and bad UTF-8', () => {
    expect(parseJson(bytes(' [1, {"a": "b"}] '))).toEqual([1, { a: 'b' }]);
    expect(parseJson(bytes('\ufeff{"a":1}'))).toEqual({ a: 1 });
    expect(parseJson(bytes(''))).toEqual({});
    expect(refusal('"hello"')).toEqual({ code: 'malformed_json', errors: undefined });
    expect(refusal('[1,')).toEqual({ code: 'malformed_json', errors: undefined });
    expect(refusal(Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]))).toEqual({ code: 'malformed_json', errors: undefined });
  });
});
