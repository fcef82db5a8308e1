import { randomBytes } from 'node:crypto';
import {
  OPERATOR_ABSOLUTE_MS,
  OPERATOR_IDLE_MS,
  SessionCodec,
  touchOperator,
  type OperatorSession,
  type TenantSession,
} from '../src/session/codec';

const T0 = Date.parse('2026-11-26T09:00:00Z');
const tenant: TenantSession = {
  role: 'tenant',
  jwt: 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln',
  tenantId: '7f0c1a52-0000-4000-8000-000000000001',
  issuedAt: T0,
  expiresAt: T0 + 3_600_000,
};

describe('SessionCodec', () => {
  const key = randomBytes(32);
  let now = T0;
  const codec = new SessionCodec(key, () => now);
  beforeEach(() => (now = T0));

  it('opens what it sealed, and the sealed text does not show the JWT', () => {
    const sealed = codec.seal(tenant);
    expect(codec.open(sealed)).toEqual(tenant);
    expect(sealed).not.toContain(tenant.jwt);
    expect(sealed).not.toContain('eyJ');
    expect(sealed).toMatch(/^[A-Za-z0-9._-]+$/); // a cookie value as is
  });

  it('refuses a sealed value with any character changed', () => {
    const sealed = codec.seal(tenant);
    const refused: number[] = [];
    for (let i = 0; i < sealed.length; i += 7) {
      const c = sealed[i] === 'A' ? 'B' : 'A';
      if (codec.open(sealed.slice(0, i) + c + sealed.slice(i + 1)) === undefined) refused.push(i);
    }
    expect(refused.length).toBe(Math.ceil(sealed.length / 7));
  });

  it('refuses one sealed under another key, garbage, and nothing', () => {
    const other = new SessionCodec(randomBytes(32), () => now);
    expect(codec.open(other.seal(tenant))).toBeUndefined();
    expect(codec.open('v2.abc.def')).toBeUndefined();
    expect(codec.open('')).toBeUndefined();
    expect(codec.open(undefined)).toBeUndefined();
  });

  it("ends a tenant session with its JWT's exp", () => {
    const sealed = codec.seal(tenant);
    now = tenant.expiresAt - 1;
    expect(codec.open(sealed)).toEqual(tenant);
    now = tenant.expiresAt;
    expect(codec.open(sealed)).toBeUndefined();
  });

  it('ends an operator session when idle, and at the absolute limit however active', () => {
    const operator: OperatorSession = {
      role: 'operator',
      credential: 'opk_example',
      startedAt: T0,
      expiresAt: T0 + OPERATOR_IDLE_MS,
    };
    now = T0 + OPERATOR_IDLE_MS + 1;
    expect(codec.open(codec.seal(operator))).toBeUndefined();

    // Seen every 20 minutes: alive until the absolute limit, not a minute more.
    let session = operator;
    for (now = T0; now < T0 + OPERATOR_ABSOLUTE_MS; now += 20 * 60_000) {
      const opened = codec.open(codec.seal(session));
      expect(opened).toBeDefined();
      session = touchOperator(opened as OperatorSession, now);
    }
    expect(session.expiresAt).toBe(T0 + OPERATOR_ABSOLUTE_MS);
    now = T0 + OPERATOR_ABSOLUTE_MS;
    expect(codec.open(codec.seal(session))).toBeUndefined();
  });

  it('refuses a sealed value whose content is not a session', () => {
    // Sealed with the right key and purpose, but a forged shape (e.g. an old format): not a session.
    const forged = codec.seal({ ...tenant, role: 'admin' } as unknown as TenantSession);
    expect(codec.open(forged)).toBeUndefined();
  });
});
