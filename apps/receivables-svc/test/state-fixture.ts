import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import {
  MESSAGE_VERSION_FIELD,
  Streams,
  type Beneficiary,
  type CallbackRequest,
  type CallbackRequestBatch,
  type ProviderAccountVersion,
  type ProviderKind,
  type ReceivableCreateItem,
} from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { txidFor } from '@payments/pix-api';
import { migrations, SCHEMA } from '../src/db/migrations';
import { PostgresProviderAccounts } from '../src/db/provider-accounts';
import type { ReceivableRow, ReceivablesDatabase } from '../src/db/schema';
import { acceptReceivables } from '../src/domain/intake';
import { reconcileDueAccounts } from '../src/domain/reconciliation';
import { registerReceivables } from '../src/domain/registration';
import type { ChargeScope } from '../src/domain/payments';
import {
  ProviderUnavailableError,
  type BatchRegistrationOutcome,
  type CancellationOutcome,
  type ChargeRequest,
  type ClientDirectory,
  type Payer,
  type PaymentProvider,
  type PaymentProviders,
  type ProviderAccount,
  type ProviderCharge,
  type ProviderChargeState,
} from '../src/domain/ports';
import { SignedSlipLinks } from '../src/transport/providers/slip-links';
import { registerHandlers } from '../src/transport/bus-handlers';
import { startProviderWebhookServer } from '../src/transport/http-server';

/**
 * The receivables schema migrated into a throw-away database, with the domain's two outside ports
 * filled by test doubles of our own (the provider and the client directory): the state logic runs its
 * real SQL against a real Postgres, and what it queues is read back from the outbox table. Provider
 * accounts are the real repository over that database; each tenant gets a sandbox account version.
 */
export interface StateFixture {
  db: Kysely<ReceivablesDatabase>;
  clients: TestClientDirectory;
  accounts: PostgresProviderAccounts;
  slipLinks: SignedSlipLinks;
  logger: ReturnType<typeof createLogger>;
  /** The tenant's current account version (made on first use: a sandbox one unless told otherwise). */
  accountFor(tenantId: string, provider?: ProviderKind): ProviderAccountVersion;
  stop(): Promise<void>;
}

/** The time zone the tests run the service in (local due dates and statistics buckets). */
export const TZ = 'America/Sao_Paulo';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** The gateway's side of slip PDF and QR code links, for tests that check them. */
export const TEST_LINKS = { publicBaseUrl: 'https://api.example.com', downloadLinkSecret: 'test-link-secret' };

export async function startStateFixture(): Promise<StateFixture> {
  const test = await createTestDatabase();
  const db = createDatabase<ReceivablesDatabase>({ url: test.url, schema: SCHEMA, poolSize: 4 });
  try {
    await migrateToLatest(db, SCHEMA, migrations);
  } catch (err) {
    await db.destroy();
    await test.drop();
    throw err;
  }
  const accounts = new Map<string, ProviderAccountVersion>();
  return {
    db,
    clients: new TestClientDirectory(),
    accounts: new PostgresProviderAccounts(db),
    slipLinks: new SignedSlipLinks(TEST_LINKS),
    logger: createLogger('receivables-test', 'silent'),
    accountFor(tenantId, provider = 'sandbox') {
      const existing = accounts.get(tenantId);
      if (existing && existing.provider === provider) return existing;
      const account = accountVersion(tenantId, provider);
      accounts.set(tenantId, account);
      return account;
    },
    async stop() {
      await db.destroy();
      await test.drop();
    },
  };
}

/** One fixture for the whole test file: started before its tests, stopped after them; `use` gets it. */
export function useStateFixture(use: (f: StateFixture) => void): void {
  let fixture: StateFixture | undefined;
  beforeAll(async () => {
    fixture = await startStateFixture();
    use(fixture);
  });
  afterAll(async () => {
    await fixture?.stop();
  });
}

/** receivables-svc's bus handlers on a bus prefix of their own, over the fixture and these banks. */
export interface ServedBus {
  /** A connection on that prefix: the gateway's side, to ask the handlers with. */
  bus: Bus;
  stop(): Promise<void>;
}

export async function serveOverBus(f: StateFixture, providers: PaymentProviders): Promise<ServedBus> {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const bus = await connectBus({ url: NATS_URL, prefix, name: 'receivables-test', logger: f.logger, timeoutMs: 5_000 });
  const handlers = registerHandlers(bus, {
    db: f.db,
    clients: f.clients,
    providers,
    accounts: f.accounts,
    timeZone: TZ,
    onEnqueued: () => undefined,
  });
  return {
    bus,
    async stop() {
      for (const h of handlers) h.unsubscribe();
      await bus.close();
    },
  };
}

type WebhookServerDeps = Parameters<typeof startProviderWebhookServer>[0];

/**
 * receivables-svc's provider webhook server over the fixture, on a free port: `deps` gives the metrics
 * it counts into and whatever a test needs otherwise (the notice worker to wake, the sandbox's secret).
 */
export function serveProviderWebhooks(
  f: StateFixture,
  deps: Pick<WebhookServerDeps, 'metrics' | 'paymentMetrics'> & Partial<WebhookServerDeps>,
): Promise<{ port: number; stop(): Promise<void> }> {
  return startProviderWebhookServer({
    db: f.db,
    accounts: f.accounts,
    port: 0,
    providerWebhookSecret: 'unused',
    timeZone: TZ,
    logger: f.logger,
    onEnqueued: () => undefined,
    onNotice: () => undefined,
    readiness: [],
    ...deps,
  });
}

/** A provider account version as the gateway sends it, paid to a beneficiary named after the tenant. */
export function accountVersion(
  tenantId: string,
  provider: ProviderKind = 'sandbox',
  beneficiary: Partial<Beneficiary> = {},
): ProviderAccountVersion {
  const accountId = randomUUID();
  return {
    account_id: accountId,
    tenant_id: tenantId,
    provider,
    // Each version its own bank account, unless a test makes two share one.
    account_key: `key-${accountId}`,
    beneficiary: {
      name: `Escola ${tenantId.slice(0, 8)}`,
      tax_id: '11.222.333/0001-81',
      city: 'Curitiba',
      pix_key: `pix-${tenantId.slice(0, 8)}@example.com`,
      agency: '0001',
      account: '123456-7',
      address: 'Rua XV de Novembro, 100',
      ...beneficiary,
    },
    base_url: null,
    sealed_credentials: provider === 'inter' ? 'v1.sealed-in-tests.not-opened.x' : null,
  };
}

/** Which charges a payment for this receivable may name (its account's, or the legacy ones). */
export function scopeOf(r: Pick<ReceivableRow, 'provider_account_id' | 'tenant_id'>): ChargeScope {
  return r.provider_account_id === null ? 'legacy' : { accountId: r.provider_account_id, tenantId: r.tenant_id };
}

/** The clients-svc port: a tenant's clients by id (lower case, as the domain looks them up). */
export class TestClientDirectory implements ClientDirectory {
  private readonly byTenant = new Map<string, Map<string, Payer>>();

  add(tenantId: string, name = 'Maria da Silva'): string {
    const clientId = randomUUID();
    const payers = this.byTenant.get(tenantId) ?? new Map<string, Payer>();
    payers.set(clientId, {
      clientId,
      name,
      taxId: '529.982.247-25',
      address: 'Rua das Flores',
      number: '123',
      neighborhood: 'Centro',
      city: 'São Paulo',
      state: 'SP',
      zipCode: '01310-100',
      email: null,
    });
    this.byTenant.set(tenantId, payers);
    return clientId;
  }

  async find(tenantId: string, clientIds: string[]): Promise<Map<string, Payer>> {
    const payers = this.byTenant.get(tenantId) ?? new Map<string, Payer>();
    return new Map(
      clientIds
        .map((id) => id.toLowerCase())
        .filter((id) => payers.has(id))
        .map((id) => [id, payers.get(id)!]),
    );
  }
}

export type PlannedOutcome = 'register' | 'reject' | 'unavailable' | 'accepted_not_issued';

/**
 * The payment-provider port as a bank would behave: idempotent on our receivable id (the same key
 * gets the same charge), an outcome chosen per request, and a hook that runs while the bank "works"
 * (to interleave a cancellation or a payment with a registration). It records the account of each call.
 */
export class TestProvider implements PaymentProvider {
  readonly registerCalls: ChargeRequest[][] = [];
  readonly registerAccounts: ProviderAccount[] = [];
  readonly cancelCalls: string[] = [];
  readonly cancelReasons: string[] = [];
  readonly cancelAccounts: ProviderAccount[] = [];
  readonly consultCalls: string[] = [];
  readonly charges = new Map<string, ProviderCharge>();
  /** Outcome for each request; `register` unless told otherwise. */
  plan: (request: ChargeRequest) => PlannedOutcome = () => 'register';
  /** Throw ProviderUnavailableError for the whole call (the bank cannot be reached). */
  down = false;
  /** Hand out no QR code image URL (''), as Inter does. */
  noQrImage = false;
  cancelOutcome: CancellationOutcome | 'unavailable' = 'cancelled';
  /** What consult answers, by charge id ('open' when not set); 'unavailable' throws. */
  readonly states = new Map<string, ProviderChargeState | 'unavailable'>();
  /** Runs inside registerMany, after the bank has decided and before it answers. */
  whileRegistering?: () => Promise<void>;
  private ourNumbers = 0;

  /** Two test banks (accounts) with the same prefix hand out the same charge ids and our_numbers, as real banks may. */
  constructor(private readonly chargeIdPrefix = 'chg_') {}

  async registerMany(account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    this.registerCalls.push(requests);
    this.registerAccounts.push(account);
    if (this.down) throw new ProviderUnavailableError('bank unreachable (test)');
    const outcomes = requests.map((request): BatchRegistrationOutcome => {
      const planned = this.plan(request);
      if (planned === 'unavailable') return { kind: 'unavailable', reason: 'bank busy (test)' };
      if (planned === 'accepted_not_issued')
        return { kind: 'unavailable', reason: 'being issued (test)', chargeId: this.chargeIdFor(request) };
      if (planned === 'reject')
        return { kind: 'rejected', code: 'payer_refused', message: 'the bank refused the payer (test)' };
      return { kind: 'registered', charge: this.chargeFor(request) };
    });
    await this.whileRegistering?.();
    return outcomes;
  }

  async cancel(account: ProviderAccount, chargeId: string, reason: string): Promise<CancellationOutcome> {
    this.cancelCalls.push(chargeId);
    this.cancelAccounts.push(account);
    this.cancelReasons.push(reason);
    if (this.cancelOutcome === 'unavailable') throw new ProviderUnavailableError('bank unreachable (test)');
    return this.cancelOutcome;
  }

  async consult(_account: ProviderAccount, chargeId: string): Promise<ProviderChargeState> {
    this.consultCalls.push(chargeId);
    const state = this.states.get(chargeId) ?? { kind: 'open' };
    if (state === 'unavailable') throw new ProviderUnavailableError('bank unreachable (test)');
    return state;
  }

  async slipPdf(_account: ProviderAccount, chargeId: string): Promise<Buffer> {
    if (this.down) throw new ProviderUnavailableError('bank unreachable (test)');
    return Buffer.from(`%PDF-1.4 slip of ${chargeId}`);
  }

  private chargeIdFor(request: ChargeRequest): string {
    return `${this.chargeIdPrefix}${request.idempotencyKey}`;
  }

  private chargeFor(request: ChargeRequest): ProviderCharge {
    const existing = this.charges.get(request.idempotencyKey);
    if (existing) return existing;
    const ourNumber = String(++this.ourNumbers).padStart(11, '0');
    const slip = request.kind === 'hybrid_slip';
    const charge: ProviderCharge = {
      chargeId: this.chargeIdFor(request),
      ourNumber,
      barcode: slip ? `9999${ourNumber}`.padEnd(44, '0') : null,
      typeableLine: slip ? `99990.${ourNumber}`.padEnd(54, '0') : null,
      pixCopyAndPaste: `00020126pix-${ourNumber}`,
      qrcodeImageUrl: this.noQrImage ? '' : `http://bank.test/qr/${ourNumber}.png`,
      pdfUrl: `http://bank.test/pdf/${ourNumber}.pdf`,
    };
    this.charges.set(request.idempotencyKey, charge);
    return charge;
  }
}

/**
 * A PIX bank as the PaymentProvider port sees it: a PIX charge's id is its txid (txidFor), a boleto's
 * a bank id of its own; `consult` answers what the test set (open when not set).
 */
export class PixBank implements PaymentProvider {
  readonly consultCalls: string[] = [];
  readonly states = new Map<string, ProviderChargeState>();

  async registerMany(_account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    return requests.map((request) => {
      const chargeId = request.kind === 'pix' ? txidFor(request.idempotencyKey) : `boleto-${randomUUID()}`;
      return {
        kind: 'registered',
        charge: {
          chargeId,
          ourNumber: request.kind === 'pix' ? chargeId : '00000000001',
          barcode: null,
          typeableLine: null,
          pixCopyAndPaste: `00020101021226pix.example/${chargeId}`,
          qrcodeImageUrl: '',
          pdfUrl: '',
        },
      };
    });
  }
  async cancel(): Promise<CancellationOutcome> {
    return 'cancelled';
  }
  async consult(_account: ProviderAccount, chargeId: string): Promise<ProviderChargeState> {
    this.consultCalls.push(chargeId);
    return this.states.get(chargeId) ?? { kind: 'open' };
  }
  async slipPdf(): Promise<Buffer> {
    return Buffer.from('');
  }
}

/** The same test double for every provider kind (the domain picks one by the account's kind). */
export function providersOf(provider: PaymentProvider): PaymentProviders {
  return { sandbox: provider, inter: provider, pix: provider };
}

/** What the registration and cancellation workers are given. */
export function workerDeps(f: StateFixture, provider: PaymentProvider) {
  return {
    db: f.db,
    providers: providersOf(provider),
    accounts: f.accounts,
    slipLinks: f.slipLinks,
    logger: f.logger,
  };
}

/** A receivable creation item for a registered client. */
export function chargeItem(clientId: string, overrides: Partial<ReceivableCreateItem> = {}): ReceivableCreateItem {
  return {
    url_callback: 'https://erp.example.com/callbacks',
    client_id: clientId,
    payment_slip_id: randomUUID(),
    account_receivable_id: randomUUID(),
    payment_method: 1,
    due_date: '2026-12-15',
    emission_date: '2026-11-23',
    value: 150.75,
    discount_type: 'NaoTemDesconto',
    fine_value: 2,
    interest_amount: 0.05,
    items: [{ description: 'Mensalidade', quantity: 1, price: 150.75 }],
    ...overrides,
  };
}

/** Accepts one charge for a new tenant (or the given one) and returns its stored row. */
export async function acceptOne(
  f: StateFixture,
  tenantId: string = randomUUID(),
  overrides: Partial<ReceivableCreateItem> = {},
): Promise<ReceivableRow> {
  const clientId = f.clients.add(tenantId);
  const item = chargeItem(clientId, overrides);
  await acceptReceivables(f.db, f.clients, tenantId, f.accountFor(tenantId), [item]);
  return row(f, tenantId, item.account_receivable_id);
}

/** Accepts `item` for the tenant under `account`, registers it in one attempt (done) and returns its row. */
export async function acceptAndRegister(
  f: StateFixture,
  providers: PaymentProviders,
  tenantId: string,
  account: ProviderAccountVersion,
  item: ReceivableCreateItem,
): Promise<ReceivableRow> {
  await acceptReceivables(f.db, f.clients, tenantId, account, [item]);
  const accepted = await row(f, tenantId, item.account_receivable_id);
  const deps = { db: f.db, providers, accounts: f.accounts, slipLinks: f.slipLinks, logger: f.logger };
  expect(await registerReceivables(deps, { tenant_id: tenantId, receivable_ids: [accepted.id] }, 1)).toBe('done');
  return rowById(f, accepted.id);
}

/** Makes every notice not applied yet due now (as time passing would). */
export async function noticesDueNow(f: StateFixture): Promise<void> {
  await f.db
    .updateTable('bank_notices')
    .set({ next_attempt_at: new Date(0) })
    .where('applied_at', 'is', null)
    .execute();
}

/** One reconciliation round as the service runs it, with every account due now. */
export async function reconcileAllNow(f: StateFixture, providers: PaymentProviders): Promise<void> {
  await f.db
    .updateTable('reconciliation_accounts')
    .set({ last_complete_at: new Date(0) })
    .execute();
  await reconcileDueAccounts({
    db: f.db,
    providers,
    accounts: f.accounts,
    logger: f.logger,
    intervalMs: 1,
    holder: 'test',
  });
}

export async function row(f: StateFixture, tenantId: string, accountReceivableId: string): Promise<ReceivableRow> {
  return f.db
    .selectFrom('receivables')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('account_receivable_id', '=', accountReceivableId)
    .executeTakeFirstOrThrow();
}

export async function rowById(f: StateFixture, id: string): Promise<ReceivableRow> {
  return f.db.selectFrom('receivables').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** What the outbox holds for a stream, as messages (msg_id, payload as its reader sees it: no version field), oldest first. */
export async function outbox<T = unknown>(
  f: StateFixture,
  stream: { name: string },
): Promise<Array<{ msg_id: string; payload: T }>> {
  const rows = await f.db
    .selectFrom('outbox')
    .select(['msg_id', 'payload'])
    .where('stream', '=', stream.name)
    .orderBy('id')
    .execute();
  return rows.map((r) => {
    const { [MESSAGE_VERSION_FIELD]: _version, ...payload } = r.payload as Record<string, unknown>;
    return { msg_id: r.msg_id, payload: payload as T };
  });
}

/** Every callback request queued for this receivable (from the callback batches in the outbox). */
export async function callbacksFor(
  f: StateFixture,
  receivable: Pick<ReceivableRow, 'account_receivable_id' | 'tenant_id'>,
): Promise<CallbackRequest[]> {
  const batches = await outbox<CallbackRequestBatch>(f, Streams.callbackRequests);
  return batches
    .flatMap((b) => b.payload.requests)
    .filter(
      (r) =>
        r.tenant_id === receivable.tenant_id &&
        (r.payload as { accounts_receivable_id?: string }).accounts_receivable_id === receivable.account_receivable_id,
    );
}

export async function history(
  f: StateFixture,
  receivableId: string,
): Promise<Array<{ from_state: string | null; to_state: string; reason: string }>> {
  return f.db
    .selectFrom('state_history')
    .select(['from_state', 'to_state', 'reason'])
    .where('receivable_id', '=', receivableId)
    .orderBy('id')
    .execute();
}
