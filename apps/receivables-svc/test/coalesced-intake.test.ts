import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  ServiceError,
  Streams,
  Subjects,
  type ErrorCode,
  type ProviderAccountVersion,
  type ReceivableCreateItem,
  type RegistrationJob,
} from '@payments/contracts';
import { acceptRequests, type IntakeOutcome } from '../src/domain/intake';
import type { Payer } from '../src/domain/ports';
import { COALESCED_MAX_CHARGES } from '../src/transport/coalesced-intake';
import {
  chargeItem,
  outbox,
  providersOf,
  serveOverBus,
  TestClientDirectory,
  TestProvider,
  useStateFixture,
  type ServedBus,
  type StateFixture,
} from './state-fixture';

/*
 * Concurrent create requests share transactions: one commit serves many single-charge requests, each
 * still answered its own counts, and one refused fails alone. The oracle for "shared" is Postgres's own:
 * the transaction that inserted a row (its xmin), and the registration jobs in the outbox.
 */

/** The clients directory, slowed: a batch lasts long enough for the requests sent meanwhile to gather. */
class SlowClientDirectory extends TestClientDirectory {
  lookups = 0;

  override async find(tenantId: string, clientIds: string[]): Promise<Map<string, Payer>> {
    this.lookups += 1;
    await new Promise((resolve) => setTimeout(resolve, 150));
    return super.find(tenantId, clientIds);
  }
}

let f: StateFixture;
let directory: SlowClientDirectory;
let served: ServedBus;
useStateFixture((fixture) => (f = fixture));

beforeAll(async () => {
  directory = new SlowClientDirectory();
  served = await serveOverBus({ ...f, clients: directory }, providersOf(new TestProvider()));
});

afterAll(async () => {
  await served?.stop();
});

interface Answer {
  created: number;
  alreadyExisting: number;
  existing: string[];
}

/** POST's bus request, as the gateway sends it; the counts read back from the answer's words. */
async function create(
  tenantId: string,
  items: ReceivableCreateItem[],
  account: ProviderAccountVersion = f.accountFor(tenantId),
): Promise<Answer> {
  const reply = await served.bus.request(
    Subjects.receivables.create,
    { tenant_id: tenantId, provider_account: account, receivables: items },
    { service: 'receivables' },
  );
  const created = /^(\d+) receivable\(s\) received/.exec(reply.message);
  const existing = /; (\d+) already existed/.exec(reply.message);
  if (!created) throw new Error(`unexpected answer: ${reply.message}`);
  return {
    created: Number(created[1]),
    alreadyExisting: existing ? Number(existing[1]) : 0,
    existing: reply.existing ?? [],
  };
}

/** The code and field errors of a refusal. */
function refusal(err: unknown): { code: ErrorCode; paths: string[] } {
  expect(err).toBeInstanceOf(ServiceError);
  const e = err as ServiceError;
  return { code: e.code, paths: (e.errors ?? []).map((fe) => fe.path) };
}

/** Every stored charge of these tenants, with the transaction that inserted it. */
async function stored(tenantIds: string[]) {
  const rows = await f.db
    .selectFrom('receivables')
    .select(['id', 'tenant_id', 'account_receivable_id', 'payment_slip_id', sql<string>`xmin::text`.as('xmin')])
    .where('tenant_id', 'in', tenantIds)
    .execute();
  return rows;
}

/** The registration jobs queued for these tenants. */
async function jobsOf(tenantIds: string[]): Promise<RegistrationJob[]> {
  const jobs = await outbox<RegistrationJob>(f, Streams.receivableRegistrations);
  return jobs.map((j) => j.payload).filter((job) => tenantIds.includes(job.tenant_id));
}

/** One request holds the batch slots' first turn, so those sent right after gather behind it. */
async function whileABatchRuns<T>(send: () => Promise<T>): Promise<T> {
  const opener = randomUUID();
  const first = create(opener, [chargeItem(directory.add(opener))]);
  const second = create(opener, [chargeItem(directory.add(opener))]);
  await new Promise((resolve) => setTimeout(resolve, 30));
  const result = await send();
  await Promise.all([first, second]);
  return result;
}

describe('concurrent create requests share transactions', () => {
  it('stores single-charge requests of two tenants in shared commits, each charge once, each request its own answer', async () => {
    const tenants = [randomUUID(), randomUUID()];
    const requests = Array.from({ length: 40 }, (_, k) => {
      const tenantId = tenants[k % 2];
      return { tenantId, item: chargeItem(directory.add(tenantId)) };
    });
    const lookupsBefore = directory.lookups;

    const answers = await Promise.all(requests.map((r) => create(r.tenantId, [r.item])));

    expect(answers).toEqual(requests.map(() => ({ created: 1, alreadyExisting: 0, existing: [] })));
    const rows = await stored(tenants);
    expect(rows.map((r) => `${r.tenant_id}/${r.account_receivable_id}`).sort()).toEqual(
      requests.map((r) => `${r.tenantId}/${r.item.account_receivable_id}`).sort(),
    );
    const transactions = new Set(rows.map((r) => r.xmin));
    expect(transactions.size).toBeLessThanOrEqual(requests.length / 4);
    // Some commit holds charges of both tenants.
    const tenantsPerTransaction = [...transactions].map(
      (xmin) => new Set(rows.filter((r) => r.xmin === xmin).map((r) => r.tenant_id)).size,
    );
    expect(Math.max(...tenantsPerTransaction)).toBe(2);
    // One lookup per tenant and batch; registration jobs of one tenant each, each charge in one job.
    expect(directory.lookups - lookupsBefore).toBeLessThanOrEqual(2 * transactions.size);
    const jobs = await jobsOf(tenants);
    expect(jobs.length).toBeLessThan(requests.length / 2);
    for (const job of jobs) {
      const ids = new Set(rows.filter((r) => r.tenant_id === job.tenant_id).map((r) => r.id));
      expect(job.receivable_ids.every((id) => ids.has(id))).toBe(true);
    }
    expect(jobs.flatMap((j) => j.receivable_ids).sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it('fails a refused request alone, storing nothing of it, while the rest of its batch is stored', async () => {
    const good = randomUUID();
    const inter = randomUUID();
    const unknownClient = randomUUID();
    const foreign = randomUUID();
    const goodItems = Array.from({ length: 6 }, () => chargeItem(directory.add(good)));
    const interAccount = f.accountFor(inter, 'inter');
    const interClient = directory.add(inter);
    const interOk = chargeItem(interClient, { due_date: '2027-06-15' });
    // Inter issues no charge under R$ 2.50: refused at intake, in our field names.
    const interTooSmall = chargeItem(interClient, { due_date: '2027-06-15', value: 1, items: [] });
    directory.add(unknownClient);

    const outcomes = await whileABatchRuns(() =>
      Promise.allSettled([
        ...goodItems.slice(0, 3).map((item) => create(good, [item])),
        create(inter, [interOk, interTooSmall], interAccount),
        create(unknownClient, [chargeItem(directory.add(unknownClient)), chargeItem(randomUUID())]),
        create(foreign, [chargeItem(directory.add(foreign))], f.accountFor(randomUUID())),
        ...goodItems.slice(3).map((item) => create(good, [item])),
        create(inter, [interOk], interAccount),
      ]),
    );

    const answers = outcomes.map((o) => (o.status === 'fulfilled' ? o.value : o.reason));
    const ok = { created: 1, alreadyExisting: 0, existing: [] };
    expect(answers.slice(0, 3)).toEqual([ok, ok, ok]);
    expect(answers.slice(6)).toEqual([ok, ok, ok, ok]);
    expect(refusal(answers[3])).toEqual({ code: 'validation_failed', paths: ['/1/value'] });
    expect(refusal(answers[4])).toEqual({ code: 'validation_failed', paths: ['/1/client_id'] });
    expect(refusal(answers[5])).toEqual({ code: 'no_provider_account', paths: [] });

    const rows = await stored([good, inter, unknownClient, foreign]);
    expect(rows.filter((r) => r.tenant_id === unknownClient || r.tenant_id === foreign)).toEqual([]);
    // The refused Inter request stored nothing; its lone good charge came in again, alone, afterwards.
    expect(rows.filter((r) => r.tenant_id === inter).map((r) => r.account_receivable_id)).toEqual([
      interOk.account_receivable_id,
    ]);
    expect(
      rows
        .filter((r) => r.tenant_id === good)
        .map((r) => r.account_receivable_id)
        .sort(),
    ).toEqual(goodItems.map((i) => i.account_receivable_id).sort());
    // ... and the others still shared their commits.
    expect(new Set(rows.map((r) => r.xmin)).size).toBeLessThanOrEqual(2);
  });

  it('creates an id sent by two requests of one batch once: the second is told it already exists', async () => {
    const tenantId = randomUUID();
    const clientId = directory.add(tenantId);
    const first = chargeItem(clientId);
    const second = chargeItem(clientId, {
      account_receivable_id: first.account_receivable_id.toUpperCase(),
      value: 99.5,
    });

    const answers = await whileABatchRuns(() =>
      Promise.all([create(tenantId, [first]), create(tenantId, [second, chargeItem(clientId)])]),
    );

    const rows = await stored([tenantId]);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(1);
    // Whichever reached the batch first was created; the other is told it exists, named as the
    // winner spelled it, and the stored charge is the winner's.
    const firstWon = answers[0].created === 1;
    expect(answers).toEqual(
      firstWon
        ? [
            { created: 1, alreadyExisting: 0, existing: [] },
            { created: 1, alreadyExisting: 1, existing: [first.account_receivable_id] },
          ]
        : [
            { created: 0, alreadyExisting: 1, existing: [second.account_receivable_id] },
            { created: 2, alreadyExisting: 0, existing: [] },
          ],
    );
    const kept = rows.filter((r) => r.account_receivable_id === first.account_receivable_id);
    expect(kept.map((r) => r.payment_slip_id)).toEqual([(firstWon ? first : second).payment_slip_id]);
    const jobIds = (await jobsOf([tenantId])).flatMap((j) => j.receivable_ids);
    expect(jobIds.sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it('runs a request larger than a gathered one alone, at once', async () => {
    const tenantId = randomUUID();
    const clientId = directory.add(tenantId);
    const large = Array.from({ length: COALESCED_MAX_CHARGES + 1 }, () => chargeItem(clientId));
    const singles = Array.from({ length: 4 }, () => chargeItem(clientId));

    const answers = await whileABatchRuns(() =>
      Promise.all([create(tenantId, large), ...singles.map((item) => create(tenantId, [item]))]),
    );

    expect(answers[0]).toEqual({ created: large.length, alreadyExisting: 0, existing: [] });
    const rows = await stored([tenantId]);
    const largeIds = new Set(large.map((i) => i.account_receivable_id));
    const largeXmins = new Set(rows.filter((r) => largeIds.has(r.account_receivable_id)).map((r) => r.xmin));
    expect(largeXmins.size).toBe(1);
    expect(rows.filter((r) => !largeIds.has(r.account_receivable_id) && largeXmins.has(r.xmin))).toEqual([]);
  });
});

describe('acceptRequests, one statement for the batch', () => {
  it('inserts the first of an id sent twice in one batch, in any spelling, and answers each request in order', async () => {
    const clients = new TestClientDirectory();
    const tenantId = randomUUID();
    const clientId = clients.add(tenantId);
    const account = f.accountFor(tenantId);
    const id = randomUUID();
    const first = chargeItem(clientId, { account_receivable_id: id, value: 10 });
    const again = chargeItem(clientId, { account_receivable_id: id.toUpperCase(), value: 20 });
    const withinOne = chargeItem(clientId, { account_receivable_id: id, value: 30 });

    const outcomes = await acceptRequests(f.db, clients, [
      { tenantId, account, items: [first] },
      { tenantId, account, items: [again, chargeItem(clientId)] },
      { tenantId, account, items: [withinOne] },
    ]);

    const ok = (created: number, existing: string[]): IntakeOutcome => ({
      ok: true,
      value: { created, alreadyExisting: existing.length, existing },
    });
    // The existing id named as first sent (lower case), not as the later request spelled it.
    expect(outcomes).toEqual([ok(1, []), ok(1, [id]), ok(0, [id])]);
    const row = await f.db
      .selectFrom('receivables')
      .select(['amount_cents', 'account_receivable_id_as_sent'])
      .where('tenant_id', '=', tenantId)
      .where('account_receivable_id', '=', id)
      .executeTakeFirstOrThrow();
    expect({ ...row, amount_cents: Number(row.amount_cents) }).toEqual({
      amount_cents: 1000,
      account_receivable_id_as_sent: id,
    });
  });

  it('fails only the request whose values Postgres refuses: the others are stored again without it', async () => {
    const clients = new TestClientDirectory();
    const tenantId = randomUUID();
    const clientId = clients.add(tenantId);
    const account = f.accountFor(tenantId);
    const before = chargeItem(clientId);
    const after = chargeItem(clientId);

    const outcomes = await acceptRequests(f.db, clients, [
      { tenantId, account, items: [before] },
      { tenantId, account, items: [chargeItem(clientId, { due_date: '2026-02-30' })] },
      { tenantId, account, items: [after] },
    ]);

    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    const rows = await f.db
      .selectFrom('receivables')
      .select('account_receivable_id')
      .where('tenant_id', '=', tenantId)
      .execute();
    expect(rows.map((r) => r.account_receivable_id).sort()).toEqual(
      [before.account_receivable_id, after.account_receivable_id].sort(),
    );
  });
});
