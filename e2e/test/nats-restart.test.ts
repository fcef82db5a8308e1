import { randomUUID } from 'node:crypto';
import type { Problem, ReceivableCreateItem, ReceivablesCreateResponse } from '@payments/contracts';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { PrivateNats } from '../support/private-nats';
import { queryRows } from '../support/db-probe';
import {
  isPaid,
  isRegistered,
  payAtSandbox,
  receivableCallbacks,
  setSandboxMode,
} from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

// A NATS restart in the middle of a flow. The whole system runs against a nats-server of this test's
// own (JetStream stored in a temporary directory), killed while charges are being registered and
// called back, and started again on the same port and store: every charge must register and every
// callback arrive exactly once. The shared NATS on 4222 is never touched.

const SLOW_MS = '2000';
const FAST = {
  CALLBACK_RETRY_SCHEDULE_MS: '200,400,800',
  CALLBACK_POLL_INTERVAL_MS: '50',
  PROVIDER_RETRIES: '0',
  BANK_SANDBOX_SLOW_MS: SLOW_MS,
};

let nats: PrivateNats | undefined;
let system: TestSystem | undefined;
let receiver: CallbackReceiver | undefined;

beforeAll(async () => {
  nats = await PrivateNats.create();
  system = await startSystem({ withReceivables: true, env: { ...FAST, NATS_URL: nats.url } });
  receiver = await new CallbackReceiver().start();
}, 120_000);
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
  await nats?.destroy();
}, 120_000);

it('registers every charge and delivers each callback exactly once when NATS is killed and restarted mid-flow', async () => {
  const sys = system!;
  const r = receiver!;
  const tenant = await sys.newTenant('NATS restart');
  const client = clientPayload();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
  const item = (i: number) =>
    receivablePayload(client.client_id, r.url, {
      payment_method: i % 2 === 0 ? 1 : 3,
      value: 10 + i,
      items: [],
    }) as ReceivableCreateItem;

  // Charges accepted just before the crash, their registration under way: the sandbox answers slowly,
  // so the worker is waiting on the bank when NATS dies. Its results are then committed while the bus
  // is down (the callbacks wait in the outbox), and the job's ack is lost with the connection.
  await setSandboxMode(sys.sandboxUrl!, 'slow');
  const before = Array.from({ length: 40 }, (_, i) => item(i));
  expect(
    (await tenant.api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', before)).status,
  ).toBe(202);
  await waitFor(
    async () =>
      (await queryRows(sys.databaseUrl, "select 1 from receivables.outbox where stream = 'registrations'")).length ===
      0,
    30_000,
    'registration job relayed',
  );
  await new Promise((res) => setTimeout(res, 300)); // for the worker to take it (a later take is a valid mid-flow state too)
  await nats!.kill();
  await setSandboxMode(sys.sandboxUrl!, 'normal');

  // While the bus is down, a create cannot reach receivables-svc: 503, and its key is not kept.
  const during = [item(100)];
  const key = randomUUID();
  const refused = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', during, key);
  expect(refused.status).toBe(503);
  expect(refused.json).toMatchObject({ status: 503 });
  await new Promise((res) => setTimeout(res, Number(SLOW_MS) + 500)); // the slow registration ends during the outage
  await nats!.start();

  // Back: the same request (same key) goes through once the gateway has reconnected.
  await waitFor(
    async () => (await tenant.api.postIdempotent('/api/v1/accounts-receivable', during, key)).status === 202,
    30_000,
    'create accepted after the restart',
  );
  const after = Array.from({ length: 20 }, (_, i) => item(200 + i));
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', after)).status).toBe(202);

  const all = [...before, ...during, ...after];
  const registeredIds = () =>
    new Set(
      receivableCallbacks(r)
        .filter(isRegistered)
        .map((c) => c.accounts_receivable_id),
    );
  await waitFor(
    () => all.every((c) => registeredIds().has(c.account_receivable_id)),
    60_000,
    `all ${all.length} registered callbacks`,
  );

  // A payment after the restart travels sandbox -> receivables-svc -> callback-svc too.
  const paidId = before[1].account_receivable_id;
  const ourNumber = receivableCallbacks(r, paidId).filter(isRegistered)[0].payment_data.our_number;
  expect((await payAtSandbox(sys.sandboxUrl!, ourNumber, 'pix')).status).toBe(200);
  await waitFor(() => receivableCallbacks(r, paidId).some(isPaid), 30_000, 'paid callback');

  await new Promise((res) => setTimeout(res, 2_000)); // time for a duplicate to show, were there one
  for (const c of all) {
    const got = receivableCallbacks(r, c.account_receivable_id);
    const expected = c.account_receivable_id === paidId ? ['registered', 'paid'] : ['registered'];
    expect({ id: c.account_receivable_id, types: got.map((x) => ('type' in x ? x.type : x.status)) }).toEqual({
      id: c.account_receivable_id,
      types: expected,
    });
  }
  const webhookIds = r.received.map((x) => x.headers['webhook-id']);
  expect(new Set(webhookIds).size).toBe(webhookIds.length);
  expect(r.received.every((x) => x.answered === 200)).toBe(true);
}, 180_000);
