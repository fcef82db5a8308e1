/**
 * bench/inter-reconciliation: reconciliation of one Inter account with 10,000 open charges when every
 * notice is lost (docs/architecture.md, "A real bank loses nothing"). Every app runs as its own process, as `npm start` runs them,
 * against the bank sandbox's Inter dialect over mutual TLS.
 *
 * How the 10,000 open charges are made: one charge goes through the whole system (gateway, intake,
 * registration at the bank) so the account, its webhook and its bookkeeping are what the system
 * makes; the other 9,999 are seeded consistently on both sides: created at the bank through Inter's
 * own API (the integration's certificate and token, seuNumero derived from our id as the adapter
 * derives it) and stored in receivables-svc's table as registered with that codigoSolicitacao.
 * Registering them through the system would take 83 minutes at Inter's 120 creates a minute, which
 * the adapter keeps to; the bench measures reconciliation, not registration.
 *
 * Then, with every notice dropped (fault drop_webhooks), it pays BENCH_INTER_PAYMENTS charges at the
 * bank over BENCH_INTER_WINDOW_MS and prints the bank's own count of calls a minute per endpoint
 * (GET /sandbox/inter/calls) against Inter's limits, and the time from each payment to its `paid`
 * callback; beside it the bare baseline of the same run: the same payments with notices on.
 */
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Agent, request } from 'undici';
import { createTestDatabase } from '@payments/db';
import { createTenant, openAdminDatabase } from '@payments/gateway';
import { seuNumeroFor } from '@payments/inter-cobranca';
import {
  CountingReceiver,
  deleteStreams,
  developmentUnlessSet,
  fmt,
  freePort,
  percentile,
  randomPrefix,
  runBench,
  startApp,
  stopApps,
  systemEnv,
} from './support';

const OPEN = Number(process.env.BENCH_INTER_CHARGES ?? 10_000);
const PAYMENTS = Number(process.env.BENCH_INTER_PAYMENTS ?? 6);
/** How long the lost-notice phase lasts (payments spread over it); the calls a minute are counted over it. */
const WINDOW_MS = Number(process.env.BENCH_INTER_WINDOW_MS ?? 180_000);
/** PROVIDER_RECONCILE_INTERVAL_MS of the run: npm start's 30 s unless set. */
const INTERVAL_MS = Number(process.env.PROVIDER_RECONCILE_INTERVAL_MS ?? 30_000);
const SEED_CONCURRENCY = 16;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Inter's published limits a minute (production; Inter's API reference, developers.inter.co), by the
 * endpoint names the sandbox counts calls under. The webhook endpoints (callback retry included) allow
 * 5, the callback history 10, PATCH 10, the token 5 as integrators observe; the rest 120.
 */
const INTER_LIMITS: Record<string, number> = {
  token: 5,
  webhook_get: 5,
  webhook_put: 5,
  webhook_delete: 5,
  callbacks: 10,
  callbacks_retry: 5,
  edit: 10,
};
const DEFAULT_LIMIT = 120;

/** GET /sandbox/inter/calls: per endpoint, the calls so far and those in the last minute. */
interface CallReport {
  endpoints: Record<string, { total: number; last_minute: number; refused: number }>;
}

interface Integration {
  client_id: string;
  client_secret: string;
  cert_pem: string;
  key_pem: string;
  account: string;
  pix_key: string;
}

async function sandboxCall<T>(sandboxUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${sandboxUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`sandbox ${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** `npm run admin -- tenant account ...` as an operator runs it (the secret from stdin). */
function setAccount(env: Record<string, string>, args: string[], stdin: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'admin', '--', 'tenant', 'account', ...args, '--json'], {
      cwd: join(__dirname, '..'),
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tenant account exited ${code}: ${out}`))));
    child.stdin.end(stdin);
  });
}

/** Inter's own API with an integration's certificate: what the seeding uses to make boletos at the bank. */
class InterApi {
  private readonly agent: Agent;
  private token = '';

  constructor(
    private readonly baseUrl: string,
    private readonly integration: Integration,
    caPem: string,
  ) {
    this.agent = new Agent({
      connect: { cert: integration.cert_pem, key: integration.key_pem, ca: caPem },
      connections: SEED_CONCURRENCY,
    });
  }

  async authenticate(): Promise<void> {
    const res = await request(`${this.baseUrl}/oauth/v2/token`, {
      method: 'POST',
      dispatcher: this.agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: this.integration.client_id,
        client_secret: this.integration.client_secret,
        grant_type: 'client_credentials',
        scope: 'boleto-cobranca.read boleto-cobranca.write',
      }).toString(),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${text}`);
    this.token = (JSON.parse(text) as { access_token: string }).access_token;
  }

  /** POST /cobranca/v3/cobrancas: the codigoSolicitacao. */
  async create(body: Record<string, unknown>): Promise<string> {
    const res = await request(`${this.baseUrl}/cobranca/v3/cobrancas`, {
      method: 'POST',
      dispatcher: this.agent,
      headers: {
        authorization: `Bearer ${this.token}`,
        'content-type': 'application/json',
        'x-conta-corrente': this.integration.account,
      },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`create: ${res.statusCode} ${text}`);
    return (JSON.parse(text) as { codigoSolicitacao: string }).codigoSolicitacao;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachLimit<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

interface Template {
  id: string;
  tenant_id: string;
  due_date: string;
  payer: { name: string; taxId: string; address: string; city: string; state: string; zipCode: string };
  provider_account_id: string;
}

/**
 * The other OPEN - 1 charges, like the registered one: at the bank through its API, then in
 * receivables-svc's table as registered with the bank's codigoSolicitacao. Returns id -> codigo.
 */
async function seed(
  databaseUrl: string,
  api: InterApi,
  template: Template,
  count: number,
): Promise<Map<string, { codigo: string; cents: number }>> {
  const charges = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    accountReceivableId: randomUUID(),
    paymentSlipId: randomUUID(),
    cents: 10_000 + i,
    codigo: '',
  }));
  const digits = template.payer.taxId.replace(/\D/g, '');
  await api.authenticate();
  await eachLimit(charges, SEED_CONCURRENCY, async (c) => {
    c.codigo = await api.create({
      seuNumero: seuNumeroFor(c.id),
      valorNominal: c.cents / 100,
      dataVencimento: template.due_date,
      numDiasAgenda: 60,
      pagador: {
        cpfCnpj: digits,
        tipoPessoa: digits.length === 14 ? 'JURIDICA' : 'FISICA',
        nome: template.payer.name,
        endereco: template.payer.address,
        cidade: template.payer.city,
        uf: template.payer.state,
        cep: template.payer.zipCode.replace(/\D/g, ''),
      },
    });
  });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let i = 0; i < charges.length; i += 1_000) {
      const slice = charges.slice(i, i + 1_000);
      await client.query(
        `insert into receivables.receivables (id, tenant_id, account_receivable_id, client_id, payment_slip_id,
           payment_method, url_callback, emission_date, due_date, amount_cents, discount_type, discount_cents,
           discount_until, fine_bp, interest_cents_per_day, items, payer, client_name, state, registration_status,
           provider_account_id, account_receivable_id_as_sent, client_id_as_sent, payment_slip_id_as_sent,
           provider_charge_id, registered_at)
         select v.id, r.tenant_id, v.ar, r.client_id, v.ps, r.payment_method, r.url_callback, r.emission_date,
           r.due_date, v.amount, r.discount_type, r.discount_cents, r.discount_until, r.fine_bp,
           r.interest_cents_per_day, r.items, r.payer, r.client_name, 'pending', 'registered',
           r.provider_account_id, v.ar::text, r.client_id_as_sent, v.ps::text, v.codigo, now()
           from receivables.receivables r,
                unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::bigint[], $6::text[]) as v(id, ar, ps, amount, codigo)
          where r.id = $1`,
        [
          template.id,
          slice.map((c) => c.id),
          slice.map((c) => c.accountReceivableId),
          slice.map((c) => c.paymentSlipId),
          slice.map((c) => c.cents),
          slice.map((c) => c.codigo),
        ],
      );
    }
  } finally {
    await client.end();
  }
  return new Map(charges.map((c) => [c.accountReceivableId, { codigo: c.codigo, cents: c.cents }]));
}

/** Pays each charge at the bank, spread over `spreadMs`, and resolves with the ms from each payment to its `paid` callback. */
async function payAndTime(
  sandboxUrl: string,
  receiver: CountingReceiver,
  charges: Array<[string, { codigo: string; cents: number }]>,
  spreadMs: number,
  timeoutMs: number,
): Promise<number[]> {
  const paidAt = new Map<string, number>();
  for (const [i, [id, charge]] of charges.entries()) {
    if (i > 0) await sleep(spreadMs / charges.length);
    await sandboxCall(sandboxUrl, 'POST', `/sandbox/charges/${charge.codigo}/pay`, { method: 'boleto' });
    paidAt.set(id, Date.now());
  }
  const deadline = Date.now() + timeoutMs;
  while (charges.some(([id]) => !receiver.bodies.has(id)) && Date.now() < deadline) await sleep(200);
  const missing = charges.filter(([id]) => !receiver.bodies.has(id));
  if (missing.length > 0)
    throw new Error(`${missing.length} of ${charges.length} payments brought no paid callback in ${timeoutMs} ms`);
  return charges.map(([id]) => (receiver.bodies.get(id) ?? NaN) - (paidAt.get(id) ?? NaN)).sort((a, b) => a - b);
}

/** Samples the bank's calls every few seconds: the most any endpoint had in the minute before a sample, and the totals. */
class CallSampler {
  readonly busiest = new Map<string, number>();
  private first: CallReport | null = null;
  private last: CallReport | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly sandboxUrl: string,
    private readonly clientId: string,
  ) {}

  async start(everyMs = 5_000): Promise<void> {
    this.first = await this.sample();
    this.timer = setInterval(() => void this.sample().catch(() => undefined), everyMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sample();
  }

  /** Per endpoint: the busiest minute seen, the calls during the sampling, and those refused with 429. */
  rows(): Array<{ endpoint: string; busiest: number; calls: number; refused: number }> {
    const last = this.last?.endpoints ?? {};
    const first = this.first?.endpoints ?? {};
    return Object.keys(last)
      .sort()
      .map((endpoint) => ({
        endpoint,
        busiest: this.busiest.get(endpoint) ?? 0,
        calls: last[endpoint].total - (first[endpoint]?.total ?? 0),
        refused: last[endpoint].refused - (first[endpoint]?.refused ?? 0),
      }));
  }

  private async sample(): Promise<CallReport> {
    const report = await sandboxCall<CallReport>(
      this.sandboxUrl,
      'GET',
      `/sandbox/inter/calls?client_id=${encodeURIComponent(this.clientId)}`,
    );
    // The first sample's last minute may hold the seeding's own calls: only later ones count.
    if (this.first)
      for (const [endpoint, calls] of Object.entries(report.endpoints))
        this.busiest.set(endpoint, Math.max(this.busiest.get(endpoint) ?? 0, calls.last_minute));
    this.last = report;
    return report;
  }
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const dir = mkdtempSync(join(tmpdir(), 'bench-inter-'));
  const { env, gatewayPort } = await systemEnv(database.url, prefix);
  const interPort = await freePort();
  const interBaseUrl = `https://127.0.0.1:${interPort}/inter`;
  Object.assign(env, {
    BANK_SANDBOX_INTER_PORT: String(interPort),
    INTER_BASE_URL: interBaseUrl,
    PROVIDER_RECONCILE_INTERVAL_MS: String(INTERVAL_MS),
  });
  const sandboxUrl = env.PROVIDER_BASE_URL;
  const children: ChildProcess[] = [];
  const receiver = await new CountingReceiver().start();
  let api: InterApi | undefined;
  try {
    children.push(await startApp('bank-sandbox', env, 'bank-sandbox ready'));
    children.push(await startApp('clients-svc', env, 'clients-svc ready'));
    children.push(await startApp('callback-svc', env, 'callback-svc ready'));
    children.push(await startApp('receivables-svc', env, 'receivables-svc ready'));
    children.push(await startApp('gateway', env, 'gateway listening'));
    const gateway = `http://127.0.0.1:${gatewayPort}/api/v1`;

    // A tenant on an Inter integration the sandbox issues, set with the admin CLI.
    const admin = await openAdminDatabase(database.url);
    const tenant = await createTenant(admin, 'bench inter');
    await admin.destroy();
    const integration = await sandboxCall<Integration>(sandboxUrl, 'POST', '/sandbox/inter/integrations');
    const [certFile, keyFile] = [join(dir, 'inter.crt'), join(dir, 'inter.key')];
    writeFileSync(certFile, integration.cert_pem);
    writeFileSync(keyFile, integration.key_pem, { mode: 0o600 });
    await setAccount(
      env,
      [
        ...['--tenant', tenant.tenant_id, '--provider', 'inter', '--beneficiary-name', 'Escola Bench'],
        ...['--beneficiary-tax-id', '45.723.174/0001-10', '--account', integration.account],
        ...['--pix-key', integration.pix_key, '--client-id', integration.client_id, '--client-secret-file', '-'],
        ...['--cert-file', certFile, '--key-file', keyFile, '--base-url', interBaseUrl],
      ],
      integration.client_secret,
    );
    const jwt = (
      (await (
        await fetch(`${gateway}/authenticate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tenant.integration_token}` },
        })
      ).json()) as { access_token: string }
    ).access_token;
    const headers = { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' };
    const clientId = randomUUID();
    const payer = {
      client_id: clientId,
      name: 'Maria da Silva',
      cnpj_cpf: '529.982.247-25',
      address: 'Rua das Flores',
      number: '123',
      neighborhood: 'Centro',
      city: 'São Paulo',
      state: 'SP',
      zip_code: '01310-100',
    };
    const clientRes = await fetch(`${gateway}/clients`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: JSON.stringify([payer]),
    });
    if (clientRes.status !== 201) throw new Error(`POST /clients: ${clientRes.status} ${await clientRes.text()}`);

    // One charge through the whole system.
    const first = randomUUID();
    const due = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(
      new Date(Date.now() + 30 * 86_400_000),
    );
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date());
    const posted = await fetch(`${gateway}/accounts-receivable`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: JSON.stringify([
        {
          url_callback: receiver.url,
          client_id: clientId,
          payment_slip_id: randomUUID(),
          account_receivable_id: first,
          payment_method: 1,
          items: [],
          due_date: due,
          emission_date: today,
          value: 99.99,
          discount_type: 'NaoTemDesconto',
          fine_value: 0,
          interest_amount: 0,
        },
      ]),
    });
    if (posted.status !== 202) throw new Error(`POST /accounts-receivable: ${posted.status} ${await posted.text()}`);
    await receiver.waitForEvents(1, 120_000);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const template = (
      await client.query<Template>(
        `select id, tenant_id, due_date::text, payer, provider_account_id from receivables.receivables
          where tenant_id = $1 and account_receivable_id = $2 and registration_status = 'registered'`,
        [tenant.tenant_id, first],
      )
    ).rows[0];
    await client.end();
    if (!template) throw new Error('the first charge was not registered');

    // The other 9,999, at the bank and here.
    const caPem = readFileSync(env.INTER_TRUSTED_CA_FILE ?? defaultCaFile(), 'utf8');
    api = new InterApi(interBaseUrl, integration, caPem);
    const seedStarted = Date.now();
    const seeded = await seed(database.url, api, template, OPEN - 1);
    const seedS = (Date.now() - seedStarted) / 1000;

    // Lost notices: payments reach the ERP only by reconciliation.
    await sandboxCall(sandboxUrl, 'POST', '/sandbox/inter/faults', { drop_webhooks: true });
    receiver.reset();
    const pool = [...seeded.entries()];
    // The seeding's creates fall out of the bank's one-minute count before the window starts.
    await sleep(61_000);
    const sampler = new CallSampler(sandboxUrl, integration.client_id);
    await sampler.start();
    const windowStart = Date.now();
    const lost = await payAndTime(sandboxUrl, receiver, pool.slice(0, PAYMENTS), WINDOW_MS, 3 * INTERVAL_MS + 60_000);
    const rest = windowStart + WINDOW_MS - Date.now();
    if (rest > 0) await sleep(rest);
    await sampler.stop();
    const windowEnd = Date.now();

    // Baseline, same run: the same kind of payment with notices on.
    await sandboxCall(sandboxUrl, 'POST', '/sandbox/inter/faults', { drop_webhooks: false });
    const noticed = await payAndTime(
      sandboxUrl,
      receiver,
      pool.slice(PAYMENTS, 2 * PAYMENTS),
      PAYMENTS * 2_000,
      3 * INTERVAL_MS + 60_000,
    );

    const minutes = (windowEnd - windowStart) / 60_000;
    console.log('\nbench/inter-reconciliation');
    console.log(
      `  one Inter account, ${fmt(OPEN)} open charges (1 registered through the system, ${fmt(OPEN - 1)} seeded at the bank's API and in receivables-svc's table in ${fmt(seedS, 1)} s)`,
    );
    console.log(
      `  PROVIDER_RECONCILE_INTERVAL_MS ${fmt(INTERVAL_MS)}; every notice lost for ${fmt(minutes, 1)} min; the bank's own count of calls:`,
    );
    console.log(
      `    ${'endpoint'.padEnd(16)} ${'busiest minute'.padStart(14)}   ${'mean a minute'.padStart(13)}   Inter's limit   refused (429)`,
    );
    let within = true;
    for (const row of sampler.rows()) {
      const limit = INTER_LIMITS[row.endpoint] ?? DEFAULT_LIMIT;
      if (row.busiest > limit) within = false;
      console.log(
        `    ${row.endpoint.padEnd(16)} ${fmt(row.busiest).padStart(14)}   ${fmt(row.calls / minutes, 1).padStart(13)}   ${String(limit).padStart(13)}   ${fmt(row.refused).padStart(13)}${row.busiest > limit ? '   OVER' : ''}`,
      );
    }
    console.log(`  within Inter's limits: ${within ? 'yes' : 'NO'}`);
    const line = (name: string, ms: number[]) =>
      console.log(
        `  ${name.padEnd(44)} p50 ${fmt(percentile(ms, 50) / 1000, 2)} s   max ${fmt(ms[ms.length - 1] / 1000, 2)} s   (${ms.length} payments)`,
      );
    line('payment to paid callback, notices lost:', lost);
    line('baseline, same run, notices on:', noticed);
    console.log(`  goal: within two intervals, ${fmt((2 * INTERVAL_MS) / 1000)} s`);
  } finally {
    await api?.close().catch(() => undefined);
    await stopApps(children);
    await receiver.stop();
    await deleteStreams(prefix).catch(() => undefined);
    await database.drop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The development CA the sandbox's Inter dialect makes on first start (DEV_INTER_SANDBOX_CA_FILE). */
function defaultCaFile(): string {
  return join(__dirname, '..', '.data', 'bank-sandbox-inter', 'ca.pem');
}

runBench(main);
