import { randomUUID } from 'node:crypto';
import type { Problem, ReceivableCreateItem } from '@payments/contracts';
import { queryRows } from '../support/db-probe';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { PrivatePostgres } from '../support/private-postgres';
import { CallbackPublisher } from '../support/publish';
import {
  isPaid,
  isRegistered,
  payAtSandbox,
  receivableCallbacks,
  setSandboxMode,
} from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

// Work queued while Postgres is down completes after it comes back, once. The system runs against a
// Postgres cluster of this test's own (e2e/support/private-postgres.ts), stopped with registrations
// under way and callback requests arriving, then started again; the shared server on 5432 is never
// touched.

const SLOW_MS = 2_000;
const FAST = {
  CALLBACK_RETRY_SCHEDULE_MS: '200,400,800',
  CALLBACK_POLL_INTERVAL_MS: '50',
  PROVIDER_RETRIES: '0',
  BANK_SANDBOX_SLOW_MS: String(SLOW_MS),
};

let postgres: PrivatePostgres | undefined;
let system: TestSystem | undefined;
let receiver: CallbackReceiver | undefined;
let publisher: CallbackPublisher | undefined;

beforeAll(async () => {
  postgres = await PrivatePostgres.create();
  system = await startSystem({ withReceivables: true, databaseUrl: postgres.url('outage'), env: FAST });
  receiver = await new CallbackReceiver().start();
  publisher = await CallbackPublisher.connect(system.busPrefix);
}, 120_000);
afterAll(async () => {
  await receiver?.stop();
  await publisher?.close();
  await system?.stop();
  await postgres?.destroy();
}, 120_000);

it('completes the registrations and callbacks queued while Postgres was down, each exactly once', async () => {
  const sys = system!;
  const r = receiver!;
  const tenant = await sys.newTenant('Postgres outage');
  const client = clientPayload();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);

  // Charges accepted (committed, their job on its way) and then Postgres stops while the bank works
  // on them: the worker can neither read nor record, the job is retried until the database is back.
  await setSandboxMode(sys.sandboxUrl!, 'slow');
  const charges = Array.from(
    { length: 10 },
    (_, i) =>
      receivablePayload(client.client_id, r.url, {
        payment_method: i % 2 === 0 ? 1 : 3,
        value: 20 + i,
        items: [],
      }) as ReceivableCreateItem,
  );
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', charges)).status).toBe(202);
  await waitFor(
    async () =>
      (await queryRows(sys.databaseUrl, "select 1 from receivables.outbox where stream = 'registrations'")).length ===
      0,
    30_000,
    'registration job relayed',
  );
  await new Promise((res) => setTimeout(res, 300)); // for the worker to take it (a later take is a valid case too)
  await setSandboxMode(sys.sandboxUrl!, 'normal');
  await postgres!.stop();

  // Callback requests published meanwhile (as a producer's relay would have just before): callback-svc
  // cannot store them yet.
  const requests = Array.from({ length: 10 }, () =>
    publisher!.request(tenant.tenantId, r.url, {
      success: true,
      type: 'registered',
      accounts_receivable_id: randomUUID(),
    }),
  );
  await publisher!.publishBatch(requests);
  // An API call meanwhile is refused, not half done, and asks to be retried.
  const refused = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [
    receivablePayload(client.client_id, r.url),
  ]);
  expect({ status: refused.status, code: refused.json?.code }).toEqual({ status: 503, code: 'service_unavailable' });
  await new Promise((res) => setTimeout(res, SLOW_MS + 1_000)); // the slow registration ends during the outage
  expect(r.received).toHaveLength(0);
  await postgres!.start();

  const registered = () =>
    new Set(
      receivableCallbacks(r)
        .filter(isRegistered)
        .map((c) => c.accounts_receivable_id),
    );
  await waitFor(
    () => charges.every((c) => registered().has(c.account_receivable_id)),
    90_000,
    'registered callbacks of the charges',
  );
  const delivered = () => new Set(r.delivered().map((x) => x.headers['webhook-id']));
  await waitFor(
    () => requests.every((q) => delivered().has(q.event_id)),
    60_000,
    'the callbacks requested during the outage',
  );

  // And the system works on: a payment after the outage reaches the ERP.
  const paid = charges[1];
  const ourNumber = receivableCallbacks(r, paid.account_receivable_id).filter(isRegistered)[0].payment_data.our_number;
  expect((await payAtSandbox(sys.sandboxUrl!, ourNumber, 'pix')).status).toBe(200);
  await waitFor(() => receivableCallbacks(r, paid.account_receivable_id).some(isPaid), 30_000, 'paid callback');

  await new Promise((res) => setTimeout(res, 2_000)); // time for a duplicate to show, were there one
  for (const c of charges) {
    const types = receivableCallbacks(r, c.account_receivable_id).map((x) => ('type' in x ? x.type : x.status));
    expect({ id: c.account_receivable_id, types }).toEqual({
      id: c.account_receivable_id,
      types: c === paid ? ['registered', 'paid'] : ['registered'],
    });
  }
  for (const q of requests) expect(r.forEvent(q.event_id)).toHaveLength(1);
  const rows = await queryRows<{ state: string; registration_status: string; n: string }>(
    sys.databaseUrl,
    'select state, registration_status, count(*) as n from receivables.receivables where tenant_id = $1 group by 1, 2 order by 1',
    [tenant.tenantId],
  );
  expect(rows.map((x) => [x.state, x.registration_status, Number(x.n)])).toEqual([
    ['approved', 'registered', 1],
    ['pending', 'registered', 9],
  ]);
}, 240_000);

// The gateway reads its database first (the access-token check), so with Postgres down an API call
// fails there: that is a passing outage, answered as a service that does not answer is, 503 with
// Retry-After, so that an ERP retries (apps/gateway/src/transport/http/error-handler.ts).
it('answers API calls with 503 service_unavailable and Retry-After, not 500, while Postgres is down', async () => {
  const tenant = await system!.newTenant('Outage answer');
  await postgres!.stop();
  try {
    const res = await tenant.api.postIdempotent<Problem>('/api/v1/clients', [clientPayload()]);
    expect({ status: res.status, code: res.json?.code }).toEqual({ status: 503, code: 'service_unavailable' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The token exchange reads the database too.
    const auth = await tenant.api.post<Problem>('/api/v1/authenticate', undefined, {
      authorization: `Bearer ${tenant.integrationToken}`,
    });
    expect({ status: auth.status, code: auth.json?.code }).toEqual({ status: 503, code: 'service_unavailable' });
  } finally {
    await postgres!.start();
  }
  // And once it is back, the same call goes through.
  expect((await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()])).status).toBe(201);
}, 120_000);
