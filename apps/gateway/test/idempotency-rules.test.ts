import { ServiceError } from '@payments/contracts';
import { fingerprint, readIdempotencyKey } from '../src/domain/idempotency/idempotency';
import { bearerCredential } from '../src/transport/http/bearer';

describe('fingerprint', () => {
  it('ignores key order and whitespace but not values, method or path', () => {
    const a = fingerprint('POST', '/api/v1/clients', [{ a: 1, b: { c: 2, d: 3 } }]);
    expect(fingerprint('POST', '/api/v1/clients', [{ b: { d: 3, c: 2 }, a: 1 }])).toBe(a);
    expect(fingerprint('POST', '/api/v1/clients', [{ a: 1, b: { c: 2, d: 4 } }])).not.toBe(a);
    expect(fingerprint('PUT', '/api/v1/clients', [{ a: 1, b: { c: 2, d: 3 } }])).not.toBe(a);
    expect(fingerprint('POST', '/api/v1/clientz', [{ a: 1, b: { c: 2, d: 3 } }])).not.toBe(a);
  });
  it('tells array order apart (a batch is ordered)', () => {
    expect(fingerprint('POST', '/x', [1, 2])).not.toBe(fingerprint('POST', '/x', [2, 1]));
  });
});

describe('readIdempotencyKey', () => {
  it('requires the key where the policy says so, and checks its shape', () => {
    expect(() => readIdempotencyKey('', 'required')).toThrow(ServiceError);
    expect(readIdempotencyKey('', 'optional')).toBeUndefined();
    expect(readIdempotencyKey('order-42:retry', 'required')).toBe('order-42:retry');
    expect(() => readIdempotencyKey('a b', 'optional')).toThrow(/printable/);
    expect(() => readIdempotencyKey('é', 'optional')).toThrow(/printable/);
    expect(() => readIdempotencyKey('k'.repeat(256), 'required')).toThrow(/255/);
  });
});

describe('bearerCredential', () => {
  it('takes the credential of a Bearer header only', () => {
    expect(bearerCredential('Bearer abc.def')).toBe('abc.def');
    expect(bearerCredential('bearer   abc')).toBe('abc');
    expect(bearerCredential('Basic abc')).toBeUndefined();
    expect(bearerCredential('Bearer')).toBeUndefined();
    expect(bearerCredential('Bearer a b')).toBeUndefined();
    expect(bearerCredential(undefined)).toBeUndefined();
  });
});
