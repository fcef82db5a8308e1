import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Streams, type CallbackRequestBatch, type RegistrationJob } from '@payments/contracts';
import { DEV_CREDENTIALS_ENCRYPTION_KEY, parseKeyring } from '@payments/credential-seal';
import type { InterCredentials } from '@payments/contracts';
import { registerReceivables } from '../src/domain/registration';
import type { ChargeRequest, PaymentProviders, ProviderAccount } from '../src/domain/ports';
import type { ReceivableRow } from '../src/db/schema';
import { InterProvider, type InterProviderOptions } from '../src/transport/providers/inter';
import { INTER_DEFAULT_LIMITS, type InterObserver } from '../src/transport/providers/inter/client';
import { interShared } from '../src/transport/providers/providers';
import { BankSandboxProvider } from '../src/transport/providers/bank-sandbox-provider';
import { acceptReceivables } from '../src/domain/intake';
import { chargeItem, outbox, row, rowById, useStateFixture, type StateFixture } from './state-fixture';
import { ScriptedInterBank } from './scripted-inter';

/**
 * Registration at Inter never leaves a live boleto behind a rejected or forgotten charge, never makes two
 * boletos for one charge, and keeps within Inter's limits for all instances together: the
 * adapter and the registration worker over a real Postgres, against a scripted Inter (scripted-inter.ts)
 * that keeps its own charges and every call made to it.
 */

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

let bank: ScriptedInterBank;
beforeEach(async () => {
  bank = await ScriptedInterBank.start();
});
const providers: InterProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.close()));
  await bank.stop();
});

const keyring = parseKeyring(DEV_CREDENTIALS_ENCRYPTION_KEY, undefined);
const credentials: InterCredentials = { client_id: 'c', client_secret: 's', cert_pem: 'unused', key_pem: 'unused' };

/** An Inter adapter as one instance of receivables-svc makes it: sharing budgets and token through `f.db`. */
function interProvider(
  options: Partial<InterProviderOptions> & {
    windowMs?: number;
    limits?: Partial<typeof INTER_DEFAULT_LIMITS>;
    waitMaxMs?: number;
    replace?: boolean;
  } = {},
): InterProvider {
  const { windowMs, limits, waitMaxMs, replace, ...rest } = options;
  const provider = new InterProvider({
    credentials: () =>
      Promise.resolve({
        versionId: 'v1',
        credentials: { ...credentials, ...(replace ? { replace_webhook: true } : {}) },
      }),
    defaultBaseUrl: bank.url,
    timeoutMs: 2_000,
    webhookUrl: (accountId) => `https://receivables.example.com/provider/webhooks/inter/${accountId}`,
    ownsWebhookUrl: (url) => url.startsWith('https://receivables.example.com/provider/webhooks/inter/'),
    shared: interShared(
      f.db,
      {
        inter: {
          baseUrl: bank.url,
          callLimits: { ...INTER_DEFAULT_LIMITS, ...limits },
          callWaitMaxMs: waitMaxMs ?? 10_000,
        },
        credentialsEncryptionKey: keyring,
      },
      windowMs,
    ),
    issuePollMs: [0],
    ...rest,
  });
  providers.push(provider);
  return provider;
}

function interAccount(overrides: Partial<ProviderAccount['beneficiary']> = {}): ProviderAccount {
  return {
    id: randomUUID(),
    tenantId: randomUUID(),
    provider: 'inter',
    accountKey: `inter:${randomUUID()}`,
    beneficiary: {
      name: 'Escola Exemplo',
      tax_id: '11.222.333/0001-81',
      city: 'Curitiba',
      pix_key: null,
      agency: '0001',
      account: null,
      address: null,
      ...overrides,
    },
    baseUrl: null,
    sealedCredentials: 'sealed',
  };
}

function chargeRequest(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  return {
    idempotencyKey: randomUUID(),
    providerChargeId: null,
    createMarkedAt: null,
    kind: 'hybrid_slip',
    amountCents: 15_075,
    issueDate: '2026-11-23',
    dueDate: '2026-12-15',
    payer: {
      clientId: randomUUID(),
      name: 'Maria da Silva',
      taxId: '529.982.247-25',
      address: 'Rua das Flores',
      number: '100',
      neighborhood: 'Centro',
      city: 'Belo Horizonte',
      state: 'MG',
      zipCode: '30110-012',
      email: null,
    },
    discount: null,
    fineBp: 0,
    interestPerDayCents: 0,
    instructions: [],
    descriptionLines: [],
    reference: 'ref',
    ...overrides,
  };
}

/** The registration worker's deps, with `inter` as the bank of every account. */
function deps(inter: InterProvider) {
  const sandbox = new BankSandboxProvider({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 500, retries: 0 });
  const all: PaymentProviders = { sandbox, inter, pix: sandbox };
  return { db: f.db, providers: all, accounts: f.accounts, slipLinks: f.slipLinks, logger: f.logger };
}

/** A receivable accepted under a new tenant's Inter account. */
async function acceptedAtInter(): Promise<ReceivableRow> {
  const tenantId = randomUUID();
  const item = chargeItem(f.clients.add(tenantId));
  await acceptReceivables(f.db, f.clients, tenantId, f.accountFor(tenantId, 'inter'), [item]);
  return row(f, tenantId, item.account_receivable_id);
}

const job = (r: ReceivableRow): RegistrationJob => ({ tenant_id: r.tenant_id, receivable_ids: [r.id] });

describe('the durable registration mark', () => {
  it('a database error right after a successful create, then the job again in a new process: one boleto', async () => {
    bank.duplicateWindowMs = 0; // the bank's own duplicate control does not save us here
    const r = await acceptedAtInter();
    // Every write to receivables fails from now on: the results of the create cannot be recorded.
    await sql`alter table receivables add constraint test_no_writes check (false) not valid`.execute(f.db);
    try {
      await expect(registerReceivables(deps(interProvider()), job(r), 1)).rejects.toThrow(/test_no_writes/);
    } finally {
      await sql`alter table receivables drop constraint test_no_writes`.execute(f.db);
    }
    expect(bank.charges).toHaveLength(1);
    // A republished copy (delivery count 1 again) handled by another process (a new adapter, nothing in memory).
    expect(await registerReceivables(deps(interProvider()), job(r), 1)).toBe('done');
    expect(bank.charges).toHaveLength(1);
    const row = await rowById(f, r.id);
    expect(row).toMatchObject({
      registration_status: 'registered',
      provider_charge_id: bank.charges[0].codigoSolicitacao,
    });
    expect(bank.callsTo('create')).toHaveLength(1);
  });

  it('the mark is written before the create is sent and says when', async () => {
    const r = await acceptedAtInter();
    bank.createScript = [503];
    expect(await registerReceivables(deps(interProvider()), job(r), 1)).toEqual({ retryInMs: 1_000 });
    const mark = await f.db
      .selectFrom('registration_marks')
      .selectAll()
      .where('receivable_id', '=', r.id)
      .executeTakeFirstOrThrow();
    expect(mark.provider_account_id).toBe(r.provider_account_id);
    expect(mark.bank_reference).toMatch(/^\d{15}$/);
    // The next attempt looks the charge up before creating it.
    expect(await registerReceivables(deps(interProvider()), job(r), 1)).toBe('done');
    const calls = bank.calls.filter((c) => c.path.startsWith('/cobranca')).map((c) => `${c.method} ${c.path}`);
    expect(calls.filter((c) => c === 'GET /cobranca/v3/cobrancas')).toHaveLength(1);
    expect(bank.charges).toHaveLength(1);
  });
});

describe('rejected only when nothing can be live', () => {
  it('a refused create that the bank stored anyway is found by seuNumero and registered', async () => {
    bank.createScript = ['store-then-400'];
    const [outcome] = await interProvider().registerMany(interAccount(), [chargeRequest()]);
    expect(outcome).toMatchObject({ kind: 'registered', charge: { chargeId: bank.charges[0].codigoSolicitacao } });
  });

  it('a refused create with nothing at the bank is rejected; inside the duplicate window of an earlier create it waits', async () => {
    bank.createScript = [422, 400];
    const inter = interProvider();
    const [first] = await inter.registerMany(interAccount(), [chargeRequest()]);
    expect(first).toMatchObject({ kind: 'rejected', code: 'inter_422' });
    const [marked] = await inter.registerMany(interAccount(), [
      chargeRequest({ createMarkedAt: new Date(Date.now() - 5 * 60_000) }),
    ]);
    expect(marked).toMatchObject({ kind: 'unavailable' });
    expect(bank.charges).toHaveLength(0);
  });

  it('a consult answering 404 after the create keeps the charge pending with its id', async () => {
    bank.consultNotFoundMs = 60_000;
    const r = await acceptedAtInter();
    expect(await registerReceivables(deps(interProvider()), job(r), 1)).toEqual({ retryInMs: 1_000 });
    const row = await rowById(f, r.id);
    expect(row).toMatchObject({
      state: 'pending',
      registration_status: 'queued',
      provider_charge_id: bank.charges[0].codigoSolicitacao,
    });
  });

  it.each([400, 404, 422])('a lookup answered %i is unavailable, never a rejection', async (status) => {
    bank.script.set('list', [{ status }]);
    const [outcome] = await interProvider().registerMany(interAccount(), [
      chargeRequest({ createMarkedAt: new Date() }),
    ]);
    expect(outcome).toMatchObject({ kind: 'unavailable' });
  });

  it('FALHA_EMISSAO is rejected and keeps its charge id', async () => {
    const inter = interProvider();
    const account = interAccount();
    await inter.registerMany(account, [chargeRequest()]);
    bank.charges[0].situacao = 'FALHA_EMISSAO';
    const [outcome] = await inter.registerMany(account, [
      chargeRequest({ providerChargeId: bank.charges[0].codigoSolicitacao }),
    ]);
    expect(outcome).toMatchObject({
      kind: 'rejected',
      code: 'inter_issue_failed',
      chargeId: bank.charges[0].codigoSolicitacao,
    });
  });

  it('a charge Inter failed to issue is rejected, its row keeping the charge id (a late notice finds it)', async () => {
    bank.newSituation = 'FALHA_EMISSAO';
    const r = await acceptedAtInter();
    expect(await registerReceivables(deps(interProvider()), job(r), 1)).toBe('done');
    expect(await rowById(f, r.id)).toMatchObject({
      state: 'rejected',
      registration_status: 'rejected',
      rejection_code: 'inter_issue_failed',
      provider_charge_id: bank.charges[0].codigoSolicitacao,
    });
  });

  it('a 403 is retried after a growing delay, for every instance, and shown to operators', async () => {
    const forbidden: number[] = [];
    const observer: InterObserver = { forbidden: (_id, _endpoint, delayMs) => forbidden.push(delayMs) };
    bank.script.set('create', [{ status: 403 }, { status: 403 }]);
    const account = interAccount();
    const [a, b] = [interProvider({ observer }), interProvider({ observer })];
    expect((await a.registerMany(account, [chargeRequest()]))[0]).toMatchObject({ kind: 'unavailable' });
    expect((await a.registerMany(account, [chargeRequest()]))[0]).toMatchObject({ kind: 'unavailable' });
    expect(forbidden).toEqual([1_000, 2_000]);
    // The other instance waits the 2 s the last 403 asked for before it creates.
    const started = Date.now();
    expect((await b.registerMany(account, [chargeRequest()]))[0]).toMatchObject({ kind: 'registered' });
    const creates = bank.callsTo('create');
    expect(creates[2].at - creates[1].at).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
  });
});

describe('Inter details', () => {
  it('sends x-conta-corrente (digits, no leading zeros) when the account names its checking account', async () => {
    await interProvider().registerMany(interAccount({ account: '0012345-6' }), [chargeRequest()]);
    const apiCalls = bank.calls.filter((c) => c.path !== '/oauth/v2/token');
    expect(apiCalls.length).toBeGreaterThanOrEqual(3); // webhook read and set, create, consult
    for (const call of apiCalls) expect(call.headers['x-conta-corrente']).toBe('123456');
    expect(bank.callsTo('token')[0].headers['x-conta-corrente']).toBeUndefined();
    await interProvider().registerMany(interAccount(), [chargeRequest()]);
    expect(bank.calls.at(-1)?.headers['x-conta-corrente']).toBeUndefined();
  });

  it('an account without a PIX key registers its slip with empty PIX fields, valid for the ERP', async () => {
    bank.noPix = true;
    const r = await acceptedAtInter();
    expect(await registerReceivables(deps(interProvider()), job(r), 1)).toBe('done');
    expect(await rowById(f, r.id)).toMatchObject({
      registration_status: 'registered',
      pix_copy_and_paste: '',
      qrcode_image_url: '',
    });
    const batches = await outbox<CallbackRequestBatch>(f, Streams.callbackRequests);
    const callback = batches
      .flatMap((b) => b.payload.requests)
      .find((c) => JSON.stringify(c.payload).includes(r.account_receivable_id_as_sent));
    expect(callback?.payload).toMatchObject({
      success: true,
      payment_data: { pix_copy_and_paste: '', qrcode_image: '', barcode: expect.stringMatching(/^\d{44}$/) },
    });
  });

  it('reads the webhook first: one set elsewhere is kept (operators told), charges still issue', async () => {
    bank.webhookUrl = 'https://erp.example.com/its-own-hook';
    const conflicts: string[] = [];
    const [outcome] = await interProvider({
      observer: { webhookConflict: (_id, url) => conflicts.push(url) },
    }).registerMany(interAccount(), [chargeRequest()]);
    expect(outcome).toMatchObject({ kind: 'registered' });
    expect(bank.webhookUrl).toBe('https://erp.example.com/its-own-hook');
    expect(conflicts).toEqual(['https://erp.example.com/its-own-hook']);
    expect(bank.calls.filter((c) => c.method === 'PUT')).toHaveLength(0);
  });

  it('with --replace-webhook the webhook set elsewhere is replaced; none or one of ours is set to ours', async () => {
    const account = interAccount();
    const limits = { webhook: 600 }; // three setups of one bank account in a few ms
    bank.webhookUrl = 'https://erp.example.com/its-own-hook';
    await interProvider({ replace: true, limits }).registerMany(account, [chargeRequest()]);
    expect(bank.webhookUrl).toBe(`https://receivables.example.com/provider/webhooks/inter/${account.id}`);
    bank.webhookUrl = null;
    await interProvider({ limits }).registerMany(account, [chargeRequest()]);
    expect(bank.webhookUrl).toBe(`https://receivables.example.com/provider/webhooks/inter/${account.id}`);
    const newer = { ...account, id: randomUUID() };
    await interProvider({ limits }).registerMany(newer, [chargeRequest()]);
    expect(bank.webhookUrl).toBe(`https://receivables.example.com/provider/webhooks/inter/${newer.id}`);
  });
});

describe('pacing for all instances', () => {
  it("a newer account version's webhook setup, waiting for its budget, does not hold the charges", async () => {
    // A minute shortened to 6 s: the webhook's 5 calls then allow a third one ~2 s after the first two.
    const inter = interProvider({ windowMs: 6_000 });
    const account = interAccount();
    await inter.registerMany(account, [chargeRequest()]); // webhook read and set: the budget spent
    const newer = { ...account, id: randomUUID() };
    const started = Date.now();
    const [outcome] = await inter.registerMany(newer, [chargeRequest()]);
    expect(outcome).toMatchObject({ kind: 'registered' });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(bank.webhookUrl).toBe(`https://receivables.example.com/provider/webhooks/inter/${account.id}`);
    // Its setup goes on beside: the URL moves to the newer version once the budget allows.
    const deadline = Date.now() + 8_000;
    while (bank.webhookUrl !== `https://receivables.example.com/provider/webhooks/inter/${newer.id}`) {
      if (Date.now() > deadline) throw new Error(`webhook still ${bank.webhookUrl}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('two instances on one database stay within the budget of an endpoint', async () => {
    const limits = { consult: 10 };
    const [a, b] = [interProvider({ windowMs: 2_000, limits }), interProvider({ windowMs: 2_000, limits })];
    const account = interAccount();
    const [charge] = await a.registerMany(account, [chargeRequest()]);
    if (charge.kind !== 'registered') throw new Error(JSON.stringify(charge));
    bank.calls.length = 0;
    await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? a : b).consult(account, charge.charge.chargeId)),
    );
    const times = bank.callsTo('consult').map((c) => c.at);
    expect(times).toHaveLength(24);
    for (const start of times)
      expect(times.filter((t) => t >= start && t < start + 2_000).length).toBeLessThanOrEqual(10);
  });

  it('a 429 is waited out for its Retry-After by every instance', async () => {
    const account = interAccount();
    const [a, b] = [interProvider(), interProvider()];
    await a.registerMany(account, [chargeRequest()]); // token and webhook in place
    bank.script.set('create', [{ status: 429, headers: { 'retry-after': '2' } }]);
    const first = a.registerMany(account, [chargeRequest()]);
    await new Promise((r) => setTimeout(r, 300));
    const second = b.registerMany(account, [chargeRequest()]);
    expect((await first)[0]).toMatchObject({ kind: 'registered' });
    expect((await second)[0]).toMatchObject({ kind: 'registered' });
    const creates = bank.callsTo('create');
    const limited = creates.findIndex((c) => c.status === 429);
    for (const later of creates.slice(limited + 1))
      expect(later.at - creates[limited].at).toBeGreaterThanOrEqual(1_950);
  });

  it('a wait beyond the bound is unavailable, not a call the bank would refuse', async () => {
    const account = interAccount();
    const a = interProvider({ waitMaxMs: 500 });
    await a.registerMany(account, [chargeRequest()]);
    bank.script.set('create', [{ status: 429, headers: { 'retry-after': '30' } }]);
    const [outcome] = await a.registerMany(account, [chargeRequest()]);
    expect(outcome).toMatchObject({ kind: 'unavailable' });
    expect(bank.callsTo('create').filter((c) => c.status === 429)).toHaveLength(1);
  });

  it('one token for two instances, and concurrent 401s make one token request', async () => {
    const account = interAccount();
    const [a, b] = [interProvider(), interProvider()];
    const [charge] = await a.registerMany(account, [chargeRequest()]);
    if (charge.kind !== 'registered') throw new Error(JSON.stringify(charge));
    await b.consult(account, charge.charge.chargeId);
    expect(bank.tokenRequests).toBe(1);
    bank.revokeTokens();
    bank.tokenDelayMs = 300;
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? a : b).consult(account, charge.charge.chargeId)),
    );
    expect(bank.tokenRequests).toBe(2);
  });

  it('a late 401 with an older token drops nothing newer (compare and drop)', async () => {
    const account = interAccount();
    const [a, b] = [interProvider(), interProvider()];
    const [charge] = await a.registerMany(account, [chargeRequest()]);
    if (charge.kind !== 'registered') throw new Error(JSON.stringify(charge));
    await b.consult(account, charge.charge.chargeId); // b holds the same token
    bank.revokeTokens();
    await a.consult(account, charge.charge.chargeId); // 401: a drops it and stores a new one
    expect(bank.tokenRequests).toBe(2);
    await b.consult(account, charge.charge.chargeId); // 401 with the old one: the new one stays
    expect(bank.tokenRequests).toBe(2);
  });
});
