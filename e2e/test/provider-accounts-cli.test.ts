import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { ProviderAccountView } from '@payments/contracts';
import { runAdmin, type AdminRun } from '../support/admin-cli';
import { startSystem, type TestSystem } from '../support/system';

/*
 * `npm run admin -- tenant account` as an operator runs it: setting a sandbox, an inter or a pix
 * account, showing it, and the rules on secrets: they come from files or stdin only, and nothing the
 * CLI prints ever contains them.
 */

/** `npm run admin -- <args>` against the test database, with `stdin` piped in and extra environment. */
function admin(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<AdminRun> {
  return runAdmin(system.databaseUrl, args, options);
}

async function query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: system.databaseUrl });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

interface VersionRow {
  id: string;
  provider: string;
  sealed_credentials: string | null;
  superseded_at: Date | null;
}
const versions = (tenantId: string) =>
  query<VersionRow>(
    'select id, provider, sealed_credentials, superseded_at from gateway.provider_accounts where tenant_id = $1 order by created_at',
    [tenantId],
  );

// Each test runs up to a dozen `npm run admin` processes one after another; while the unit tests run
// beside the two e2e shards on 2 cores, one takes several seconds to start.
jest.setTimeout(180_000);

let system: TestSystem;
let dir: string;
/** What must never show: the client secret, and the bodies of the certificate and the key. */
const secret = `inter-secret-${randomBytes(12).toString('hex')}`;
let certPem: string;
let keyPem: string;
const files = { secret: '', cert: '', key: '' };

beforeAll(async () => {
  system = await startSystem({ withoutClients: true });
  dir = mkdtempSync(join(tmpdir(), 'provider-accounts-'));
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  keyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  // Only the PEM shape is checked; a certificate's body is opaque base64 to the CLI.
  certPem = `-----BEGIN CERTIFICATE-----\n${randomBytes(300).toString('base64')}\n-----END CERTIFICATE-----\n`;
  files.secret = join(dir, 'client-secret.txt');
  files.cert = join(dir, 'inter.crt');
  files.key = join(dir, 'inter.key');
  writeFileSync(files.secret, `${secret}\n`);
  writeFileSync(files.cert, certPem);
  writeFileSync(files.key, keyPem);
}, 60_000);
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await system?.stop();
});

/** The lines of a PEM between its BEGIN and END lines (what would leak if any of it were printed). */
const pemBody = (pem: string) => pem.split('\n').filter((line) => line !== '' && !line.startsWith('-----'));

function expectNoSecret(run: AdminRun): void {
  const printed = run.stdout + run.stderr;
  expect(printed).not.toContain(secret);
  for (const line of [...pemBody(certPem), ...pemBody(keyPem)]) expect(printed).not.toContain(line);
}

const beneficiary = [
  ...['--beneficiary-name', 'Açougue Irmãos Ferreira Ltda', '--beneficiary-tax-id', '12.345.678/0001-95'],
  ...['--beneficiary-city', 'Ribeirão Preto', '--pix-key', 'financeiro@ferreira.com.br'],
  ...['--agency', '0001', '--account', '123456-7'],
];

async function newTenantId(): Promise<string> {
  return (await system.newTenant('CLI Accounts')).tenantId;
}

it('sets a sandbox account and prints it as one JSON object; shows it again, as JSON or text', async () => {
  const tenantId = await newTenantId();
  const set = await admin([
    'tenant',
    'account',
    '--tenant',
    tenantId,
    '--provider',
    'sandbox',
    ...beneficiary,
    '--json',
  ]);
  expect(set.stderr).toBe('');
  expect(set.code).toBe(0);
  const view = JSON.parse(set.stdout) as ProviderAccountView;
  expect(view).toEqual({
    tenant_id: tenantId,
    account_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    provider: 'sandbox',
    beneficiary: {
      name: 'Açougue Irmãos Ferreira Ltda',
      tax_id: '12.345.678/0001-95',
      city: 'Ribeirão Preto',
      pix_key: 'financeiro@ferreira.com.br',
      agency: '0001',
      account: '123456-7',
      address: null,
    },
    base_url: null,
    credentials: 'none',
    created_at: expect.any(String),
  });

  const shown = await admin(['tenant', 'account', '--tenant', tenantId, '--json']);
  expect(shown.code).toBe(0);
  expect(JSON.parse(shown.stdout)).toEqual(view);
  const text = await admin(['tenant', 'account', '--tenant', tenantId]);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(new RegExp(`^account_id: +${view.account_id}$`, 'm'));
  expect(text.stdout).toMatch(/^beneficiary: +Açougue Irmãos Ferreira Ltda$/m);
  expect(text.stdout).toMatch(/^credentials: +none$/m);
});

it('sets an inter account with secrets from files: credentials "set", no secret printed or stored in clear', async () => {
  const tenantId = await newTenantId();
  const set = await admin([
    ...['tenant', 'account', '--tenant', tenantId, '--provider', 'inter', ...beneficiary],
    ...['--client-id', 'client-id-123', '--client-secret-file', files.secret],
    ...['--cert-file', files.cert, '--key-file', files.key, '--base-url', 'https://cdpj.partners.bancointer.com.br'],
    '--json',
  ]);
  expect(set.code).toBe(0);
  expectNoSecret(set);
  const view = JSON.parse(set.stdout) as ProviderAccountView;
  expect(view).toMatchObject({
    tenant_id: tenantId,
    provider: 'inter',
    base_url: 'https://cdpj.partners.bancointer.com.br',
    credentials: 'set',
  });
  expect(view).not.toHaveProperty('sealed_credentials');
  expect(set.stdout).not.toContain('client-id-123');

  const [current] = (await versions(tenantId)).filter((v) => v.superseded_at === null);
  expect(current).toMatchObject({ id: view.account_id, provider: 'inter' });
  expect(current.sealed_credentials).toMatch(/^v2\.[A-Za-z0-9_-]{8}\./);
  expect(current.sealed_credentials).not.toContain(secret);
  expect(current.sealed_credentials).not.toContain('BEGIN');

  for (const json of [true, false]) {
    const shown = await admin(['tenant', 'account', '--tenant', tenantId, ...(json ? ['--json'] : [])]);
    expect(shown.code).toBe(0);
    expectNoSecret(shown);
    expect(shown.stdout).not.toContain(current.sealed_credentials!.slice(3, 20));
  }
});

it('reads one secret from stdin (-)', async () => {
  const tenantId = await newTenantId();
  const set = await admin(
    [
      ...['tenant', 'account', '--tenant', tenantId, '--provider', 'inter', ...beneficiary],
      ...['--client-id', 'client-id-123', '--client-secret-file', files.secret],
      ...['--cert-file', files.cert, '--key-file', '-', '--json'],
    ],
    { stdin: keyPem },
  );
  expect(set.stderr).toBe('');
  expect(set.code).toBe(0);
  expectNoSecret(set);
  expect((JSON.parse(set.stdout) as ProviderAccountView).credentials).toBe('set');

  // An empty stdin is no secret.
  const empty = await admin([
    ...['tenant', 'account', '--tenant', tenantId, '--provider', 'inter', ...beneficiary],
    ...[
      '--client-id',
      'client-id-123',
      '--client-secret-file',
      '-',
      '--cert-file',
      files.cert,
      '--key-file',
      files.key,
    ],
  ]);
  expect(empty.stderr).toBe('error: --client-secret-file is required\n');
  expect(empty.code).toBe(1);

  const both = await admin(
    [
      ...['tenant', 'account', '--tenant', tenantId, '--provider', 'inter', ...beneficiary],
      ...['--client-id', 'x', '--client-secret-file', '-', '--cert-file', files.cert, '--key-file', '-'],
    ],
    { stdin: keyPem },
  );
  expect(both.stderr).toMatch(/only one file flag may read stdin/);
  expect(both.code).toBe(2);
});

it('refuses a secret on the command line, pointing at the file flag, without echoing it; nothing changes', async () => {
  const tenantId = await newTenantId();
  const before = await versions(tenantId);
  const cases: Array<[string[], string]> = [
    [['--client-secret', secret], '--client-secret-file'],
    [[`--client-secret=${secret}`], '--client-secret-file'],
    [['--key', keyPem], '--key-file'],
    [['--cert', certPem], '--cert-file'],
  ];
  for (const [flag, instead] of cases) {
    const run = await admin([
      ...['tenant', 'account', '--tenant', tenantId, '--provider', 'inter', ...beneficiary],
      ...['--client-id', 'x', '--cert-file', files.cert, '--key-file', files.key],
      ...flag,
      '--json',
    ]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`${instead} <file>`);
    expectNoSecret(run);
  }
  expect(await versions(tenantId)).toEqual(before);
});

it('keeps every version: setting twice supersedes the old one, which stays', async () => {
  const tenantId = await newTenantId();
  const [development] = await versions(tenantId);
  const set = async (name: string) => {
    const run = await admin([
      ...['tenant', 'account', '--tenant', tenantId, '--provider', 'sandbox'],
      ...['--beneficiary-name', name, '--beneficiary-tax-id', '529.982.247-25', '--json'],
    ]);
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout) as ProviderAccountView;
  };
  const first = await set('First Name');
  const second = await set('Second Name');
  const rows = await versions(tenantId);
  expect(rows.map((r) => [r.id, r.superseded_at === null])).toEqual([
    [development.id, false],
    [first.account_id, false],
    [second.account_id, true],
  ]);
  const shown = await admin(['tenant', 'account', '--tenant', tenantId, '--json']);
  expect((JSON.parse(shown.stdout) as ProviderAccountView).beneficiary.name).toBe('Second Name');
});

it('says what is wrong, naming the flag or the tenant, and stores nothing', async () => {
  const tenantId = await newTenantId();
  const before = await versions(tenantId);
  // Run one at a time (each is an npm process).
  const account =
    (...flags: string[]) =>
    () =>
      admin(['tenant', 'account', '--tenant', tenantId, ...flags]);
  const cases: Array<[() => Promise<AdminRun>, number, RegExp]> = [
    [account('--provider', 'sandbox', '--beneficiary-name', 'X'), 1, /--beneficiary-tax-id is required/],
    [
      account('--provider', 'sandbox', '--beneficiary-name', 'X', '--beneficiary-tax-id', '12.345.678/0001-00'),
      1,
      /--beneficiary-tax-id must be a valid CNPJ or CPF/,
    ],
    [account('--provider', 'itau', ...beneficiary), 1, /--provider must be one of sandbox, inter, pix/],
    [account(...beneficiary), 1, /--provider is required/],
    [
      account('--provider', 'inter', ...beneficiary, '--client-id', 'x', '--cert-file', files.cert),
      1,
      /--client-secret-file is required/,
    ],
    [
      account('--provider', 'inter', ...beneficiary, '--client-id', 'x', '--client-secret-file', join(dir, 'none')),
      1,
      /--client-secret-file: cannot read .*none \(ENOENT\)/,
    ],
    [
      account('--provider', 'sandbox', ...beneficiary, '--client-id', 'x'),
      1,
      /--client-id is only for --provider inter/,
    ],
    [account('--provider'), 2, /--provider/],
  ];
  for (const [run, code, message] of cases) {
    const out = await run();
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code, stderr: expect.stringMatching(message) });
  }
  expect(await versions(tenantId)).toEqual(before);

  const unknown = randomUUID();
  const nobody = await admin(['tenant', 'account', '--tenant', unknown, '--provider', 'sandbox', ...beneficiary]);
  expect(nobody.stderr).toBe(`error: no tenant ${unknown}\n`);
  expect(nobody.code).toBe(1);
  expect((await admin(['tenant', 'account', '--tenant', unknown, '--json'])).code).toBe(1);
  const noTenant = await admin(['tenant', 'account', '--provider', 'sandbox']);
  expect(noTenant.stderr).toMatch(/tenant account needs --tenant/);
  expect(noTenant.code).toBe(1);
});

it('in production, inter credentials need CREDENTIALS_ENCRYPTION_KEY; a sandbox account needs none', async () => {
  const tenantId = await newTenantId();
  const before = await versions(tenantId);
  const inter = [
    ...['tenant', 'account', '--tenant', tenantId, '--provider', 'inter', ...beneficiary],
    ...['--client-id', 'x', '--client-secret-file', files.secret, '--cert-file', files.cert, '--key-file', files.key],
    '--json',
  ];
  const missing = await admin(inter, { env: { NODE_ENV: 'production', ADMIN_OPERATOR: 'ops' } });
  expect(missing.stderr).toMatch(/^error: CREDENTIALS_ENCRYPTION_KEY is required in production/);
  expect(missing.code).toBe(1);
  expect(await versions(tenantId)).toEqual(before);

  const own = await admin(inter, {
    env: {
      NODE_ENV: 'production',
      ADMIN_OPERATOR: 'ops',
      CREDENTIALS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
  });
  expect(own.code).toBe(0);
  expectNoSecret(own);
  // A sandbox account needs no key at all.
  const sandbox = await admin(['tenant', 'account', '--tenant', tenantId, '--provider', 'sandbox', ...beneficiary], {
    env: { NODE_ENV: 'production', ADMIN_OPERATOR: 'ops' },
  });
  expect(sandbox.code).toBe(0);
});

/* pix accounts: any bank's PIX API on the Central Bank's standard ------------------------------- */

/** The flags of a pix account but `--tenant`, with the secret from its file. */
const pixAccount = (overrides: Record<string, string | undefined> = {}) => {
  const flags: Record<string, string | undefined> = {
    '--provider': 'pix',
    '--beneficiary-name': 'Açougue Irmãos Ferreira Ltda',
    '--beneficiary-tax-id': '12.345.678/0001-95',
    '--pix-key': 'financeiro@ferreira.com.br',
    '--pix-api-url': 'https://pix.banco.example/api/v2',
    '--token-url': 'https://pix.banco.example/oauth/token',
    '--client-id': 'pix-client-123',
    '--client-secret-file': files.secret,
    '--cert-file': files.cert,
    '--key-file': files.key,
    ...overrides,
  };
  return Object.entries(flags).flatMap(([flag, value]) => (value === undefined ? [] : [flag, value]));
};

it('sets a pix account: PIX API root as base_url, credentials "set", no secret printed or stored in clear', async () => {
  const tenantId = await newTenantId();
  const set = await admin(['tenant', 'account', '--tenant', tenantId, ...pixAccount(), '--json']);
  expect(set.stderr).toBe('');
  expect(set.code).toBe(0);
  expectNoSecret(set);
  const view = JSON.parse(set.stdout) as ProviderAccountView;
  expect(view).toMatchObject({
    tenant_id: tenantId,
    provider: 'pix',
    base_url: 'https://pix.banco.example/api/v2',
    credentials: 'set',
    beneficiary: { pix_key: 'financeiro@ferreira.com.br' },
  });
  expect(set.stdout).not.toContain('pix-client-123');
  expect(set.stdout).not.toContain('oauth/token');

  const [current] = (await versions(tenantId)).filter((v) => v.superseded_at === null);
  expect(current).toMatchObject({ id: view.account_id, provider: 'pix' });
  expect(current.sealed_credentials).toMatch(/^v2\.[A-Za-z0-9_-]{8}\./);
  expect(current.sealed_credentials).not.toContain('oauth');

  const text = await admin(['tenant', 'account', '--tenant', tenantId]);
  expect(text.code).toBe(0);
  expectNoSecret(text);
  expect(text.stdout).toMatch(/^provider: +pix$/m);
  expect(text.stdout).toMatch(/^base_url: +https:\/\/pix\.banco\.example\/api\/v2$/m);
  expect(text.stdout).toMatch(/^credentials: +set$/m);
  expect(text.stdout).toMatch(/^ {2}pix_key: +financeiro@ferreira\.com\.br$/m);
  expect(text.stdout).not.toContain('note:');

  // --replace-webhook travels with a pix account's credentials too.
  const replacing = await admin([
    ...['tenant', 'account', '--tenant', tenantId, ...pixAccount(), '--replace-webhook', '--json'],
  ]);
  expect(replacing.code).toBe(0);
  expect((JSON.parse(replacing.stdout) as ProviderAccountView).credentials).toBe('set');
});

it('a pix account: each missing flag named, inter and pix flags kept apart; nothing stored', async () => {
  const tenantId = await newTenantId();
  const before = await versions(tenantId);
  const cases: Array<[string[], RegExp]> = [
    [pixAccount({ '--pix-api-url': undefined }), /^error: --pix-api-url is required\n$/],
    [pixAccount({ '--token-url': undefined }), /^error: --token-url is required\n$/],
    [pixAccount({ '--pix-key': undefined }), /^error: --pix-key is required for --provider pix/],
    [pixAccount({ '--client-id': undefined }), /^error: --client-id is required\n$/],
    [pixAccount({ '--client-secret-file': undefined }), /^error: --client-secret-file is required\n$/],
    [pixAccount({ '--cert-file': undefined }), /^error: --cert-file is required\n$/],
    [pixAccount({ '--key-file': undefined }), /^error: --key-file is required\n$/],
    [pixAccount({ '--pix-api-url': 'pix.banco.example' }), /^error: --pix-api-url must be an http\(s\) URL/],
    [pixAccount({ '--base-url': 'https://x' }), /^error: --base-url is only for --provider inter/],
    [pixAccount({ '--provider': 'inter' }), /^error: --pix-api-url is only for --provider pix/],
    [pixAccount({ '--provider': 'sandbox' }), /^error: --client-id is only for --provider inter or pix/],
  ];
  for (const [flags, message] of cases) {
    const run = await admin(['tenant', 'account', '--tenant', tenantId, ...flags]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(message) });
    expectNoSecret(run);
  }
  expect(await versions(tenantId)).toEqual(before);
});

it('in production a pix account takes https URLs only; development takes http too (a bank sandbox)', async () => {
  const tenantId = await newTenantId();
  const before = await versions(tenantId);
  const production = {
    NODE_ENV: 'production',
    ADMIN_OPERATOR: 'ops',
    CREDENTIALS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  const http = { '--pix-api-url': 'http://127.0.0.1:3101/pix/v2' };
  const httpToken = { '--token-url': 'http://127.0.0.1:3101/pix/oauth/token' };
  for (const [overrides, flag] of [
    [http, '--pix-api-url'],
    [httpToken, '--token-url'],
  ] as const) {
    const run = await admin(['tenant', 'account', '--tenant', tenantId, ...pixAccount(overrides)], {
      env: production,
    });
    expect(run.stderr).toBe(`error: ${flag} must be an https URL in production\n`);
    expect(run.code).toBe(1);
  }
  expect(await versions(tenantId)).toEqual(before);

  const https = await admin(['tenant', 'account', '--tenant', tenantId, ...pixAccount(), '--json'], {
    env: production,
  });
  expect(https.code).toBe(0);
  const development = await admin([
    ...['tenant', 'account', '--tenant', tenantId, ...pixAccount({ ...http, ...httpToken }), '--json'],
  ]);
  expect(development.code).toBe(0);
  expect((JSON.parse(development.stdout) as ProviderAccountView).base_url).toBe('http://127.0.0.1:3101/pix/v2');
});

it('an inter account without --pix-key is taken, and the CLI says it issues slips only', async () => {
  const tenantId = await newTenantId();
  const noPixKey = beneficiary.slice(0, beneficiary.indexOf('--pix-key'));
  const inter = [
    ...['tenant', 'account', '--tenant', tenantId, '--provider', 'inter', ...noPixKey],
    ...['--client-id', 'x', '--client-secret-file', files.secret, '--cert-file', files.cert, '--key-file', files.key],
  ];
  const text = await admin(inter);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/^ {2}pix_key: +-$/m);
  expect(text.stdout).toMatch(/^note: no --pix-key: this inter account issues slips only; .*422 pix_key_required$/m);
  // With --json the answer stays one JSON object; the note goes to stderr.
  const json = await admin([...inter, '--json']);
  expect(json.code).toBe(0);
  expect((JSON.parse(json.stdout) as ProviderAccountView).beneficiary.pix_key).toBeNull();
  expect(json.stderr).toMatch(/^note: no --pix-key: this inter account issues slips only/);
});
