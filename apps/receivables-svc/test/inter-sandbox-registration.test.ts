import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { InterCredentials, RegistrationJob } from '@payments/contracts';
import { DEV_CREDENTIALS_ENCRYPTION_KEY, parseKeyring } from '@payments/credential-seal';
import { acceptReceivables } from '../src/domain/intake';
import { registerReceivables } from '../src/domain/registration';
import type { ProviderAccount } from '../src/domain/ports';
import type { ReceivableRow } from '../src/db/schema';
import { InterProvider } from '../src/transport/providers/inter';
import { INTER_PATHS, WebhookView } from '@payments/inter-cobranca';
import { INTER_DEFAULT_LIMITS, InterAccountClient } from '../src/transport/providers/inter/client';
import { BankSandboxProvider } from '../src/transport/providers/bank-sandbox-provider';
import { interShared } from '../src/transport/providers/providers';
import { startInterSandbox, type InterSandbox } from './inter-sandbox';
import { accountVersion, chargeItem, row, rowById, startStateFixture, type StateFixture } from './state-fixture';

/**
 * The registration path against the bank sandbox's Inter dialect in its own process, over mutual TLS,
 * with the faults it produces on demand (POST /sandbox/inter/faults): a consult answering 404 after the
 * create, boletos without PIX, and its check of x-conta-corrente. The sandbox's own list of an
 * integration's boletos is the oracle: one boleto per charge, whatever failed in between.
 */

interface Integration extends InterCredentials {
  account: string;
}

let sandbox: InterSandbox;
let f: StateFixture;
const providers: InterProvider[] = [];
const keyring = parseKeyring(DEV_CREDENTIALS_ENCRYPTION_KEY, undefined);

beforeAll(async () => {
  // With its CA's key the sandbox issues integrations (POST /sandbox/inter/integrations), as Inter's internet banking does.
  [sandbox, f] = await Promise.all([startInterSandbox({}, { withCaKey: true }), startStateFixture()]);
}, 60_000);
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await Promise.all([sandbox?.stop(), f?.stop()]);
});
afterEach(async () => {
  await sandbox.control('DELETE', '/sandbox/inter/faults');
});

async function integration(): Promise<Integration> {
  const answer = await sandbox.control('POST', '/sandbox/inter/integrations');
  if (answer.status !== 201) throw new Error(`no integration: ${JSON.stringify(answer)}`);
  return answer.body as Integration;
}

/** One instance's Inter adapter, its budgets and token shared through the fixture's database. */
function interProvider(
  integrationOf: (account: ProviderAccount) => Integration,
  options: { webhookBase?: string; replace?: boolean } = {},
): InterProvider {
  const base = options.webhookBase ?? 'http://127.0.0.1:9';
  const provider = new InterProvider({
    credentials: (account) => {
      const { account: _number, ...credentials } = integrationOf(account);
      return Promise.resolve({
        versionId: account.id,
        credentials: { ...credentials, ...(options.replace ? { replace_webhook: true } : {}) },
      });
    },
    defaultBaseUrl: sandbox.interBaseUrl,
    timeoutMs: 3_000,
    webhookUrl: (accountId) => `${base}/provider/webhooks/inter/${accountId}`,
    ownsWebhookUrl: (url) => url.startsWith(`${base}/provider/webhooks/inter/`),
    trustedCaPem: sandbox.ca.certPem,
    shared: interShared(f.db, {
      inter: { baseUrl: sandbox.interBaseUrl, callLimits: INTER_DEFAULT_LIMITS, callWaitMaxMs: 10_000 },
      credentialsEncryptionKey: keyring,
    }),
    issuePollMs: [0, 300],
  });
  providers.push(provider);
  return provider;
}

/** A tenant's Inter account at this integration (its checking account named: x-conta-corrente is sent). */
async function acceptedAt(integrationAccount: string | null): Promise<ReceivableRow> {
  const tenantId = randomUUID();
  const version = accountVersion(tenantId, 'inter', { account: integrationAccount });
  const item = chargeItem(f.clients.add(tenantId));
  await acceptReceivables(f.db, f.clients, tenantId, version, [item]);
  return row(f, tenantId, item.account_receivable_id);
}

function deps(inter: InterProvider) {
  const sandboxProvider = new BankSandboxProvider({ baseUrl: sandbox.url, apiKey: 'k', timeoutMs: 500, retries: 0 });
  return {
    db: f.db,
    providers: { sandbox: sandboxProvider, inter, pix: sandboxProvider },
    accounts: f.accounts,
    slipLinks: f.slipLinks,
    logger: f.logger,
  };
}

const job = (r: ReceivableRow): RegistrationJob => ({ tenant_id: r.tenant_id, receivable_ids: [r.id] });

async function boletosOf(clientId: string): Promise<Array<{ cobranca: { codigoSolicitacao: string } }>> {
  const answer = await sandbox.control('GET', `/sandbox/inter/charges?client_id=${clientId}`);
  return (answer.body as { charges: Array<{ cobranca: { codigoSolicitacao: string } }> }).charges;
}

it('a database error right after the create, then the job again in a new process: one boleto at the bank', async () => {
  const bank = await integration();
  const r = await acceptedAt(bank.account);
  await sql`alter table receivables add constraint test_no_writes_sandbox check (false) not valid`.execute(f.db);
  try {
    await expect(registerReceivables(deps(interProvider(() => bank)), job(r), 1)).rejects.toThrow(
      /test_no_writes_sandbox/,
    );
  } finally {
    await sql`alter table receivables drop constraint test_no_writes_sandbox`.execute(f.db);
  }
  expect(await boletosOf(bank.client_id)).toHaveLength(1);
  // The republished job starts again at delivery count 1, in a process that remembers nothing.
  expect(await registerReceivables(deps(interProvider(() => bank)), job(r), 1)).toBe('done');
  const boletos = await boletosOf(bank.client_id);
  expect(boletos).toHaveLength(1);
  expect(await rowById(f, r.id)).toMatchObject({
    registration_status: 'registered',
    provider_charge_id: boletos[0].cobranca.codigoSolicitacao,
  });
});

it('a consult answering 404 after the create keeps the charge pending with its id; later it registers', async () => {
  const bank = await integration();
  const r = await acceptedAt(bank.account);
  await sandbox.control('POST', '/sandbox/inter/faults', { consult_not_found_ms: 60_000 });
  const inter = interProvider(() => bank);
  expect(await registerReceivables(deps(inter), job(r), 1)).toEqual({ retryInMs: 1_000 });
  const [boleto] = await boletosOf(bank.client_id);
  expect(await rowById(f, r.id)).toMatchObject({
    state: 'pending',
    registration_status: 'queued',
    provider_charge_id: boleto.cobranca.codigoSolicitacao,
  });
  await sandbox.control('DELETE', '/sandbox/inter/faults');
  expect(await registerReceivables(deps(inter), job(r), 2)).toBe('done');
  expect(await boletosOf(bank.client_id)).toHaveLength(1);
  expect((await rowById(f, r.id)).registration_status).toBe('registered');
});

it('an account without a PIX key registers its slip with empty PIX fields', async () => {
  const bank = await integration();
  const r = await acceptedAt(bank.account);
  await sandbox.control('POST', '/sandbox/inter/faults', { no_pix_key: true });
  expect(await registerReceivables(deps(interProvider(() => bank)), job(r), 1)).toBe('done');
  const registered = await rowById(f, r.id);
  expect(registered).toMatchObject({ registration_status: 'registered', pix_copy_and_paste: '', qrcode_image_url: '' });
  expect(registered.barcode).toMatch(/^\d{44}$/);
});

it("x-conta-corrente names the integration's account; another account is refused (403), never rejected", async () => {
  const bank = await integration();
  const good = await acceptedAt(bank.account);
  expect(await registerReceivables(deps(interProvider(() => bank)), job(good), 1)).toBe('done');
  const other = await acceptedAt(`${Number(bank.account) + 1}`);
  expect(await registerReceivables(deps(interProvider(() => bank)), job(other), 1)).toEqual({ retryInMs: 1_000 });
  expect(await rowById(f, other.id)).toMatchObject({ state: 'pending', registration_status: 'queued' });
  expect(await boletosOf(bank.client_id)).toHaveLength(1);
});

it('a webhook the integration has elsewhere is kept without --replace-webhook, and replaced with it', async () => {
  const bank = await integration();
  const webhookNow = async () => {
    const client = new InterAccountClient({
      baseUrl: sandbox.interBaseUrl,
      credentials: {
        client_id: bank.client_id,
        client_secret: bank.client_secret,
        cert_pem: bank.cert_pem,
        key_pem: bank.key_pem,
      },
      timeoutMs: 3_000,
      trustedCa: () => sandbox.ca.certPem,
      bankAccount: `check:${bank.client_id}`,
      accountId: 'check',
    });
    try {
      return (
        await client.callFor<{ webhookUrl: string }>(
          { method: 'GET', path: INTER_PATHS.webhook, what: 'read' },
          WebhookView,
        )
      ).webhookUrl;
    } finally {
      await client.close();
    }
  };
  // The tenant's own receiver, set before our service came (another system's URL).
  const theirs = await acceptedAt(bank.account);
  expect(
    await registerReceivables(deps(interProvider(() => bank, { webhookBase: 'http://127.0.0.1:7' })), job(theirs), 1),
  ).toBe('done');
  expect(await webhookNow()).toBe(`http://127.0.0.1:7/provider/webhooks/inter/${theirs.provider_account_id}`);
  const ours = await acceptedAt(bank.account);
  expect(await registerReceivables(deps(interProvider(() => bank)), job(ours), 1)).toBe('done');
  expect(await webhookNow()).toBe(`http://127.0.0.1:7/provider/webhooks/inter/${theirs.provider_account_id}`);
  const replacing = await acceptedAt(bank.account);
  expect(await registerReceivables(deps(interProvider(() => bank, { replace: true })), job(replacing), 1)).toBe('done');
  expect(await webhookNow()).toBe(`http://127.0.0.1:9/provider/webhooks/inter/${replacing.provider_account_id}`);
});
