import { randomBytes } from 'node:crypto';
import { connectBus, type Bus } from '@payments/bus';
import { QueueGroups, SIGNING_SECRET_MAX_AGE_MS, Subjects, type SigningSecretReply } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { BusSigningSecrets } from '../src/transport/signing-secrets';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const silent = createLogger('test', 'silent');

/** A gateway stand-in on its own bus prefix: answers what `reply` holds now, counting the requests. */
let gateway: Bus;
let callbacks: Bus;
let reply: SigningSecretReply;
let asked = 0;
let delayMs = 0;

beforeAll(async () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  gateway = await connectBus({ url: NATS_URL, prefix, name: 'test-gateway', logger: silent });
  callbacks = await connectBus({ url: NATS_URL, prefix, name: 'test-callback-svc', logger: silent });
  gateway.serve(
    Subjects.tenants.signingSecret,
    async () => {
      asked++;
      const now = reply;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return now;
    },
    { queue: QueueGroups.gateway },
  );
  await gateway.connection.flush();
});
afterAll(async () => {
  await callbacks?.close();
  await gateway?.close().catch(() => undefined);
});
beforeEach(() => {
  asked = 0;
  delayMs = 0;
  reply = { signing_secret: 'whsec_a', previous_signing_secret: null, previous_valid_until: null, max_age_ms: 1_000 };
});

const tenant = () => `00000000-0000-4000-8000-${randomBytes(6).toString('hex')}`;

it('reuses a reply for at most its max_age_ms, then asks again and sees a rotation', async () => {
  let clock = 0;
  const secrets = new BusSigningSecrets(callbacks, () => clock);
  const id = tenant();
  expect(await secrets.secretsFor(id)).toEqual(['whsec_a']);
  reply = {
    signing_secret: 'whsec_b',
    previous_signing_secret: 'whsec_a',
    previous_valid_until: 'x',
    max_age_ms: 1_000,
  };
  clock = 999;
  expect(await secrets.secretsFor(id)).toEqual(['whsec_a']);
  expect(asked).toBe(1);
  clock = 1_000;
  expect(await secrets.secretsFor(id)).toEqual(['whsec_b', 'whsec_a']);
  expect(asked).toBe(2);
});

it('never reuses a reply longer than SIGNING_SECRET_MAX_AGE_MS, and not at all with max_age_ms 0', async () => {
  let clock = 0;
  const secrets = new BusSigningSecrets(callbacks, () => clock);
  const id = tenant();
  reply = { ...reply, max_age_ms: 60_000 };
  await secrets.secretsFor(id);
  clock = SIGNING_SECRET_MAX_AGE_MS;
  await secrets.secretsFor(id);
  expect(asked).toBe(2);
  reply = { ...reply, max_age_ms: 0 };
  clock = 2 * SIGNING_SECRET_MAX_AGE_MS;
  await secrets.secretsFor(id);
  await secrets.secretsFor(id);
  expect(asked).toBe(4);
});

it('concurrent attempts for one tenant share one request', async () => {
  const secrets = new BusSigningSecrets(callbacks);
  const id = tenant();
  delayMs = 50;
  const all = await Promise.all(Array.from({ length: 20 }, () => secrets.secretsFor(id)));
  expect(all.every((s) => s[0] === 'whsec_a')).toBe(true);
  expect(asked).toBe(1);
});

it('an unknown tenant or an unreachable gateway is an error, not a stale secret', async () => {
  const secrets = new BusSigningSecrets(callbacks);
  const id = tenant();
  reply = { ...reply, max_age_ms: 0 };
  await secrets.secretsFor(id);
  await gateway.connection.drain().catch(() => undefined);
  await expect(secrets.secretsFor(id)).rejects.toThrow();
}, 15_000);
