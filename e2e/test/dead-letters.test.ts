import { randomBytes } from 'node:crypto';
import { connectBus, type Bus } from '@payments/bus';
import { Streams, type DeadLetterView, type RedriveResult } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { MetricNames } from '@payments/metrics';
import { runAdmin } from '../support/admin-cli';
import { queryRows } from '../support/db-probe';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { findSeries, scrape } from '../support/prometheus';
import {
  isRegistered,
  isRegistrationFailed,
  receivableCallbacks,
  setSandboxMode,
} from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/**
 * Dead letters ("Bad input and hostile peers"), on the whole system: a charge the bank
 * refuses is rejected with a code; a poison job message and a job whose handler keeps throwing end in
 * the dead-letter stream (JOB_MAX_FAILURES is 3 here), are counted and listed by
 * `npm run admin -- jobs dead --json`, and re-driven by `jobs redrive <id>`; the other charges flow
 * meanwhile; a provider outage, however long, dead-letters nothing.
 */

const JOB_MAX_FAILURES = 3;
const FAST = {
  CALLBACK_RETRY_SCHEDULE_MS: '200,400,800',
  CALLBACK_POLL_INTERVAL_MS: '50',
  PROVIDER_RETRIES: '0',
  JOB_MAX_FAILURES: String(JOB_MAX_FAILURES),
};

let system: TestSystem;
let tenant: TestTenant;
let receiver: CallbackReceiver;
let bus: Bus;
const client = clientPayload({ name: 'Cliente Pontual' });
const refused = clientPayload({ name: 'Cliente [sandbox:reject]' });
/** Charges of this payer make a trigger refuse their registration while the test has it installed. */
const broken = clientPayload({ name: 'Cliente [db:fail]' });

beforeAll(async () => {
  system = await startSystem({ withReceivables: true, env: FAST });
  tenant = await system.newTenant('Dead letters');
  receiver = await new CallbackReceiver().start();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client, refused, broken])).status).toBe(201);
  // A producer of the registration stream, to publish what no service would.
  bus = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: system.busPrefix,
    name: 'test-poison',
    logger: createLogger('test-poison', 'silent'),
  });
}, 60_000);

afterAll(async () => {
  await bus?.close();
  await receiver?.stop();
  await system?.stop();
});

/** `npm run admin -- <args>` against this system's database and bus. */
const admin = (...args: string[]) =>
  runAdmin(system.databaseUrl, args, { env: { BUS_PREFIX: system.busPrefix, ADMIN_OPERATOR: 'ops-alice' } });

async function deadLetters(): Promise<DeadLetterView[]> {
  const run = await admin('jobs', 'dead', '--json');
  if (run.code !== 0) throw new Error(`jobs dead exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as DeadLetterView[];
}

async function deadLettered(): Promise<number> {
  const series = findSeries(await scrape(system.receivables!.url), MetricNames.jobsDeadLettered, {
    stream: Streams.receivableRegistrations.name,
  });
  expect(series).toHaveLength(1);
  return series[0].value;
}

const callbacksFor = (id: string) => receivableCallbacks(receiver, id);
const registrations = () => `${system.busPrefix}_${Streams.receivableRegistrations.name}`;

it('rejects a refused charge with a code and dead-letters poison, while the other charges are registered', async () => {
  expect(await deadLettered()).toBe(0);
  const tag = randomBytes(4).toString('hex');
  // Poison on the registration stream: not JSON, and JSON that is not a registration job.
  await bus.streams.publishJson(Streams.receivableRegistrations, '{"tenant_id": "', `poison-json-${tag}`);
  await bus.streams.publishJson(
    Streams.receivableRegistrations,
    JSON.stringify({ tenant_id: tenant.tenantId, receivable_ids: 'all of them' }),
    `poison-schema-${tag}`,
  );
  const batch = [
    receivablePayload(client.client_id, receiver.url),
    receivablePayload(refused.client_id, receiver.url),
    receivablePayload(client.client_id, receiver.url, { payment_method: 3 }),
  ];
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', batch)).status).toBe(202);
  const [ok1, rejected, ok2] = batch.map((b) => b.account_receivable_id);
  await waitFor(
    () => [ok1, rejected, ok2].every((id) => callbacksFor(id).length === 1),
    20_000,
    'one callback per charge',
  );
  expect(callbacksFor(ok1).every(isRegistered)).toBe(true);
  expect(callbacksFor(ok2).every(isRegistered)).toBe(true);
  const [refusal] = callbacksFor(rejected);
  expect(isRegistrationFailed(refusal)).toBe(true);
  expect(refusal).toMatchObject({
    success: false,
    error: { code: 'charge_rejected', message: expect.any(String) },
  });

  const dead = (await deadLetters()).filter((d) => d.msg_id.endsWith(tag));
  expect(dead).toEqual([
    expect.objectContaining({
      stream: registrations(),
      subject: `${system.busPrefix}.${Streams.receivableRegistrations.subject}`,
      msg_id: `poison-json-${tag}`,
      failures: 1,
      error: expect.stringMatching(/^undecodable message: /),
    }),
    expect.objectContaining({
      msg_id: `poison-schema-${tag}`,
      failures: 1,
      error: 'invalid message: /receivable_ids must be array',
    }),
  ]);
  for (const d of dead) expect(Date.parse(d.dead_lettered_at)).toBeGreaterThan(Date.now() - 60_000);
  await waitFor(async () => (await deadLettered()) === 2, 10_000, 'jobs_dead_lettered_total 2');
  // The human listing names them too.
  const human = await admin('jobs', 'dead');
  expect(human.code).toBe(0);
  expect(human.stdout).toContain(`poison-schema-${tag}  failures=1  invalid message: /receivable_ids must be array`);

  // Every stream is bounded (STREAM_MAX_BYTES, development default 64 MiB; discard new), and shows its fill.
  const jsm = await bus.connection.jetstreamManager();
  for (const name of [Streams.receivableRegistrations.name, 'dead_letters']) {
    const { config } = await jsm.streams.info(`${system.busPrefix}_${name}`);
    expect([config.max_bytes, config.discard]).toEqual([64 * 1024 * 1024, 'new']);
  }
  // Read at scrape time and reused for 5 s: the dead letters show once a read comes after them.
  let fill = 0;
  await waitFor(
    async () => {
      const [series] = findSeries(await scrape(system.receivables!.url), MetricNames.streamFillRatio, {
        stream: 'dead_letters',
      });
      fill = series?.value ?? 0;
      return fill > 0;
    },
    10_000,
    'the dead letters in jetstream_stream_fill_ratio',
  );
  expect(fill).toBeLessThan(0.01);
  const metrics = await scrape(system.receivables!.url);
  expect(findSeries(metrics, MetricNames.outboxFillRatio)).toHaveLength(1);
}, 60_000);

it('dead-letters a job whose handler keeps throwing after JOB_MAX_FAILURES, and re-drives it once mended', async () => {
  // The "bug": a trigger that refuses to record this payer's registrations (the handler's transaction throws).
  await queryRows(
    system.databaseUrl,
    `create function receivables.refuse_marked() returns trigger language plpgsql as $$
     begin
       if new.payer->>'name' like '%[db:fail]%' and new.registration_status <> 'queued' then
         raise exception 'test trigger refuses receivable %', new.id;
       end if;
       return new;
     end $$;
     create trigger refuse_marked before update on receivables.receivables
       for each row execute function receivables.refuse_marked();`,
  );
  const before = await deadLettered();
  const item = receivablePayload(broken.client_id, receiver.url);
  const other = receivablePayload(client.client_id, receiver.url);
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [other])).status).toBe(202);

  // Retried after 1 s and 2 s, then given up on: about 3 s. The other job is not held up.
  let dead: DeadLetterView | undefined;
  await waitFor(
    async () => {
      dead = (await deadLetters()).find((d) => d.error.includes('test trigger refuses'));
      return dead !== undefined;
    },
    30_000,
    'the failing job in the dead letters',
  );
  expect(dead).toMatchObject({ stream: registrations(), failures: JOB_MAX_FAILURES });
  expect(dead!.error).toContain('test trigger refuses receivable');
  expect(await deadLettered()).toBe(before + 1);
  await waitFor(() => callbacksFor(other.account_receivable_id).some(isRegistered), 10_000, 'the other charge');
  expect(callbacksFor(item.account_receivable_id)).toEqual([]);
  const [queued] = await queryRows<{ registration_status: string }>(
    system.databaseUrl,
    'select registration_status from receivables.receivables where account_receivable_id = $1',
    [item.account_receivable_id],
  );
  expect(queued.registration_status).toBe('queued');

  // Mended; re-driven: published again under a derived id, registered, called back, audited.
  await queryRows(system.databaseUrl, 'drop trigger refuse_marked on receivables.receivables');
  const redrive = await admin('jobs', 'redrive', String(dead!.id), '--json');
  expect(redrive.stderr).toBe('');
  expect(redrive.code).toBe(0);
  expect(JSON.parse(redrive.stdout) as RedriveResult).toEqual({
    id: dead!.id,
    stream: registrations(),
    msg_id: `${dead!.msg_id}:redrive:${dead!.id}`,
    duplicate: false,
  });
  await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 15_000, 'the re-driven registration');
  expect(callbacksFor(item.account_receivable_id).every(isRegistered)).toBe(true);
  expect((await deadLetters()).map((d) => d.id)).not.toContain(dead!.id);

  const audit = await admin('audit', '--json');
  const entries = JSON.parse(audit.stdout) as Array<{ operator: string; action: string; details: object }>;
  expect(entries.filter((e) => e.action === 'jobs.redrive')).toEqual([
    expect.objectContaining({
      operator: 'ops-alice',
      details: { dead_letter_id: dead!.id, stream: dead!.stream, msg_id: dead!.msg_id, failures: JOB_MAX_FAILURES },
    }),
  ]);
  // Re-driven once: a second time finds nothing, and is refused.
  const again = await admin('jobs', 'redrive', String(dead!.id));
  expect(again.code).toBe(1);
  expect(again.stderr).toContain(`no dead letter ${dead!.id}`);
  const bad = await admin('jobs', 'redrive', 'abc');
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('jobs redrive needs the id of a dead letter');
}, 90_000);

it('dead-letters a callback batch with a malformed request once its good requests are delivered', async () => {
  const tag = randomBytes(4).toString('hex');
  const good = {
    event_id: `evt_${randomBytes(16).toString('hex')}`,
    tenant_id: tenant.tenantId,
    event_type: 'receivable.registered',
    url: receiver.url,
    payload: { success: true, tag },
  };
  const malformed = { ...good, event_id: `evt_${randomBytes(16).toString('hex')}`, url: 42 };
  await bus.streams.publishJson(
    Streams.callbackRequests,
    JSON.stringify({ requests: [good, malformed] }),
    `callbacks-malformed-${tag}`,
  );
  await waitFor(() => receiver.forEvent(good.event_id).length === 1, 10_000, 'the good request delivered');
  let dead: DeadLetterView[] = [];
  await waitFor(
    async () => (dead = (await deadLetters()).filter((d) => d.msg_id === `callbacks-malformed-${tag}`)).length === 1,
    10_000,
    'the batch dead-lettered',
  );
  expect(dead[0]).toMatchObject({
    stream: `${system.busPrefix}_${Streams.callbackRequests.name}`,
    failures: 1,
    error: 'malformed callback requests: request 1: /url must be string',
  });
  expect(receiver.forEvent(malformed.event_id)).toEqual([]);
});

it('a provider outage is not a failure: nothing is dead-lettered while the bank is down, however long', async () => {
  const before = await deadLetters();
  const counted = await deadLettered();
  await setSandboxMode(system.sandboxUrl!, 'down');
  const item = receivablePayload(client.client_id, receiver.url);
  try {
    expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
    // Outage retries come after 1, 2 and 4 s: four attempts in 8 s, more than JOB_MAX_FAILURES.
    const jsm = await bus.connection.jetstreamManager();
    await waitFor(
      async () =>
        (await jsm.consumers.info(registrations(), Streams.receivableRegistrations.consumer)).num_redelivered >= 1,
      10_000,
      'the registration retried',
    );
    await new Promise((r) => setTimeout(r, 8_000));
    expect(callbacksFor(item.account_receivable_id)).toEqual([]);
    expect((await deadLetters()).length).toBe(before.length);
    expect(await deadLettered()).toBe(counted);
  } finally {
    await setSandboxMode(system.sandboxUrl!, 'normal');
  }
  await waitFor(
    () => callbacksFor(item.account_receivable_id).some(isRegistered),
    20_000,
    'registered after the outage',
  );
}, 60_000);
