import { createHmac } from 'node:crypto';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { loadBankSandboxConfig } from '../src';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { BankSandboxDatabase } from '../src/db/schema';
import { ChargeStore } from '../src/db/charge-store';
import { WebhookDispatcher, type WebhookAttempt } from '../src/domain/webhook-dispatcher';
import { signSandboxWebhook, webhookSigner } from '../src/domain/webhook-signature';
import { eventually } from './harness';

// The sandbox's payment webhook is signed with Standard Webhooks; the standardwebhooks package's own
// verifier (a receiver's view) and node:crypto check what it sends.

const RAW_SECRET = 'sandbox-webhook-secret';
const STANDARD_SECRET = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
const body = JSON.stringify({ event: 'charge.paid', charge_id: 'c1', amount_paid_cents: 100, payer: 'São João' });

const receiverFor = (secret: string) =>
  secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(Buffer.from(secret), { format: 'raw' });

describe('signSandboxWebhook', () => {
  it('signs "id.timestamp.body" with HMAC-SHA256 of a plain secret\'s UTF-8 bytes', () => {
    const at = new Date('2026-11-23T12:00:00.900Z');
    const headers = signSandboxWebhook(webhookSigner(RAW_SECRET), 'evt_1', body, at);
    const expected = createHmac('sha256', RAW_SECRET).update(`evt_1.1795435200.${body}`, 'utf8').digest('base64');
    expect(headers).toEqual({
      'webhook-id': 'evt_1',
      'webhook-timestamp': '1795435200',
      'webhook-signature': `v1,${expected}`,
    });
  });

  it('decodes a whsec_ secret as the standard says: the reference verifier accepts it, a changed body or id not', () => {
    const headers = signSandboxWebhook(webhookSigner(STANDARD_SECRET), 'evt_2', body, new Date());
    const expected = createHmac('sha256', Buffer.alloc(32, 9))
      .update(`evt_2.${headers['webhook-timestamp']}.${body}`, 'utf8')
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
    expect(receiverFor(STANDARD_SECRET).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => receiverFor(STANDARD_SECRET).verify(body.replace('100', '101'), headers)).toThrow();
    expect(() => receiverFor(STANDARD_SECRET).verify(body, { ...headers, 'webhook-id': 'evt_3' })).toThrow();
    expect(() => receiverFor(RAW_SECRET).verify(body, headers)).toThrow();
  });
});

describe('WebhookDispatcher', () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Kysely<BankSandboxDatabase>;
  const config = loadBankSandboxConfig({ DATABASE_URL: 'postgres://unused/unused' });

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDatabase<BankSandboxDatabase>({ url: database.url, schema: SCHEMA });
    await migrateToLatest(db, SCHEMA, migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  /** A paid charge: its notification waits in the queue. */
  async function paidCharge(): Promise<{ eventId: string; body: string }> {
    const store = new ChargeStore(db, config.account);
    const key = `key-${Math.random()}`;
    const registered = await store.register(key, key, {
      terms: {
        kind: 'pix',
        amountCents: 5_000,
        issueDate: '2026-11-01',
        dueDate: '2026-11-30',
        payer: { name: 'Maria da Silva', taxId: '52998224725', address: null, city: null, state: null, zipCode: null },
        discount: null,
        finePercentBp: 0,
        interestPerDayCents: 0,
        instructions: [],
        descriptionLines: [],
        reference: null,
      },
      owner: { beneficiary: null, accountReference: null },
    });
    if (registered.outcome !== 'created') throw new Error(registered.outcome);
    const settled = await store.settle(registered.charge.ourNumber, 'pix', null);
    if (settled.outcome !== 'settled') throw new Error(settled.outcome);
    const row = await db
      .selectFrom('notifications')
      .select('body')
      .where('event_id', '=', settled.eventId)
      .executeTakeFirstOrThrow();
    return { eventId: settled.eventId, body: row.body };
  }

  it('signs each attempt afresh with the same webhook-id: a retry of a notice first sent 10 minutes ago is not stale', async () => {
    const notice = await paidCharge();
    const sent: Array<{ body: string; headers: Record<string, string> }> = [];
    const answers = [false, true];
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    const clock = [tenMinutesAgo];
    const dispatcher = new WebhookDispatcher({
      db,
      webhook: {
        url: 'http://receiver.invalid/',
        secret: RAW_SECRET,
        retryMs: [10],
        maxAttempts: 5,
        timeoutMs: 1_000,
        pollMs: 20,
      },
      logger: createLogger('bank-sandbox-test', 'silent'),
      poster: {
        post: (_url, sentBody, headers): Promise<WebhookAttempt> => {
          sent.push({ body: sentBody, headers });
          const ok = answers.shift() ?? true;
          return Promise.resolve({ ok, statusCode: ok ? 200 : 500, error: ok ? null : 'HTTP 500' });
        },
      },
      tracing: { inStoredContext: (_ctx, work) => work(), detached: (work) => work() },
      now: () => clock.shift() ?? new Date(),
    });
    dispatcher.start();
    try {
      await eventually(() => expect(sent).toHaveLength(2));
    } finally {
      await dispatcher.stop();
    }
    const [first, retry] = sent;
    expect([first.headers['webhook-id'], retry.headers['webhook-id']]).toEqual([notice.eventId, notice.eventId]);
    expect([first.body, retry.body]).toEqual([notice.body, notice.body]);
    expect(first.headers['webhook-timestamp']).toBe(String(Math.floor(tenMinutesAgo.getTime() / 1000)));
    expect(Number(retry.headers['webhook-timestamp'])).toBeGreaterThan(
      Number(first.headers['webhook-timestamp']) + 500,
    );
    // What a receiver makes of them now: the first attempt's signature has gone stale, the retry's is fresh.
    expect(() => receiverFor(RAW_SECRET).verify(first.body, first.headers)).toThrow(/too old/);
    expect(receiverFor(RAW_SECRET).verify(retry.body, retry.headers)).toMatchObject({ event: 'charge.paid' });
    expect(Object.keys(retry.headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    const row = await db
      .selectFrom('notifications')
      .select(['status', 'attempt_count'])
      .where('event_id', '=', notice.eventId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'delivered', attempt_count: 2 });
  });
});
