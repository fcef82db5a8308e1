import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VALID_CPF } from '../support/fixtures';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * @payments/sdk as an ERP gets it: `npm pack` in libs/sdk (its prepack builds it), the tarball
 * installed offline into a project under the system's temporary folder, outside this repository, and
 * the same program run there by plain node as an ES module and as CommonJS. The program creates a
 * client and a charge with its own callback endpoint, consults the charge, and verifies the callback's
 * signature; the test reads what it printed and what the tarball holds.
 */

const sdkRoot = join(__dirname, '..', '..', 'libs', 'sdk');

/** The program both module forms run: plain JavaScript over `sdk`, the package's exports. */
const PROGRAM = `
const { PaymentsApiError, PaymentsClient, WebhookVerificationError, ok, verifyWebhook } = sdk;
const { createServer } = require_('node:http');
const { randomUUID } = require_('node:crypto');
// What the test hands the program (the gateway, the tenant's secrets), as its one argument.
const given = JSON.parse(process.argv[2]);

const callbacks = [];
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    callbacks.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(200).end();
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));

const payments = new PaymentsClient({ baseUrl: given.gateway_url, integrationToken: given.integration_token, timeoutMs: 10000 });
const holder = { client_id: randomUUID(), name: 'Maria da Silva', cnpj_cpf: given.cpf };
const created = ok(await payments.api.POST('/api/v1/clients', { body: [holder] }), 'create client');
const charge = {
  url_callback: 'http://127.0.0.1:' + receiver.address().port + '/callbacks',
  client_id: holder.client_id,
  payment_slip_id: randomUUID(),
  account_receivable_id: randomUUID(),
  payment_method: 1,
  due_date: '2026-12-15',
  emission_date: '2026-11-23',
  value: 150.75,
  discount_type: 'NaoTemDesconto',
  fine_value: 2,
  interest_amount: 0.05,
};
ok(await payments.api.POST('/api/v1/accounts-receivable', { body: [charge] }), 'create charge');

const deadline = Date.now() + 30000;
let callback;
while (!(callback = callbacks.find((c) => c.body.includes(charge.account_receivable_id))) && Date.now() < deadline)
  await new Promise((resolve) => setTimeout(resolve, 100));
receiver.close();
if (!callback) throw new Error('no callback for the charge within 30 s');

const consulted = await payments.api.POST('/api/v1/accounts-receivable/{uuid}/consult-transaction', {
  params: { path: { uuid: charge.account_receivable_id } },
  signal: AbortSignal.timeout(10000),
});
const verified = verifyWebhook(given.signing_secret, callback.headers, callback.body);
let tampered;
try {
  verifyWebhook(given.signing_secret, callback.headers, callback.body + ' ');
  tampered = 'accepted';
} catch (err) {
  tampered = err instanceof WebhookVerificationError ? err.reason : String(err);
}
const refused = await new PaymentsClient({ baseUrl: given.gateway_url, integrationToken: 'itk_not_a_token' })
  .tokens.accessToken()
  .catch((err) => err);

console.log(JSON.stringify({
  loadedFrom: LOADED_FROM,
  created: created.message,
  consulted: consulted.response.status,
  webhookId: callback.headers['webhook-id'],
  verified,
  tampered,
  refused: { isApiError: refused instanceof PaymentsApiError, status: refused.status, requestId: refused.requestId },
}));
`;

const ESM = `import * as sdk from '@payments/sdk';
import { createRequire } from 'node:module';
const require_ = createRequire(import.meta.url);
const LOADED_FROM = import.meta.resolve('@payments/sdk');
${PROGRAM}`;

const COMMONJS = `const sdk = require('@payments/sdk');
const require_ = require;
const LOADED_FROM = require.resolve('@payments/sdk');
(async () => {
${PROGRAM}
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

interface Printed {
  loadedFrom: string;
  created: string;
  consulted: number;
  webhookId: string;
  verified: string;
  tampered: string;
  refused: { isApiError: boolean; status: number; requestId: string | undefined };
}

/** The environment without npm's own variables, so the commands here act on their folder alone. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^npm_/i.test(name) && name !== 'NODE_OPTIONS' && name !== 'NODE_PATH',
    ),
  );
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string, env = cleanEnv()): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { cwd, env, timeout: 150_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} ${args.join(' ')}: ${err.message}\n${stdout}${stderr}`)) : resolve(stdout),
    ),
  );
}

let system: TestSystem;
let tenant: TestTenant;
let outside: string;
let tarball: string;

// Packing runs esbuild and tsc (about 20 s on a loaded 2-core machine), then a whole system starts.
jest.setTimeout(180_000);

beforeAll(async () => {
  outside = mkdtempSync(join(tmpdir(), 'sdk-package-'));
  const [packed, started] = await Promise.all([
    run('npm', ['pack', '--json', '--pack-destination', outside], sdkRoot),
    startSystem({ withReceivables: true, env: { CALLBACK_POLL_INTERVAL_MS: '50' } }),
  ]);
  system = started;
  const [entry] = JSON.parse(packed) as Array<{ filename: string }>;
  if (!entry) throw new Error(`npm pack printed no file: ${packed}`);
  tarball = join(outside, entry.filename);
  const project = join(outside, 'erp');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), '{ "name": "erp", "version": "1.0.0", "private": true }\n');
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], project);
  tenant = await system.newTenant('SDK package');
}, 180_000);

afterAll(async () => {
  await system?.stop();
  if (outside) rmSync(outside, { recursive: true, force: true });
});

it('packs a tarball of the built files alone, with no dependencies and the exports map', async () => {
  const listing = await run('tar', ['-tzf', tarball], outside);
  const files = listing.trim().split('\n').sort();
  expect(files).toEqual(
    expect.arrayContaining([
      'package/package.json',
      'package/README.md',
      'package/dist/index.mjs',
      'package/dist/index.cjs',
      'package/dist/index.d.mts',
      'package/dist/index.d.cts',
      'package/dist/types/index.d.ts',
    ]),
  );
  expect(files.filter((f) => f.startsWith('package/src/') || f.includes('.test.'))).toEqual([]);
  const manifest = JSON.parse(
    readFileSync(join(outside, 'erp', 'node_modules', '@payments', 'sdk', 'package.json'), 'utf8'),
  ) as Record<string, unknown>;
  expect(manifest).not.toHaveProperty('dependencies');
  expect(manifest).not.toHaveProperty('private');
  expect(manifest.exports).toEqual({
    '.': {
      import: { types: './dist/index.d.mts', default: './dist/index.mjs' },
      require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
    },
    './package.json': './package.json',
  });
  // The repository's own package.json is back: the workspace keeps reading the sources.
  expect(JSON.parse(readFileSync(join(sdkRoot, 'package.json'), 'utf8'))).toMatchObject({ main: 'src/index.ts' });
});

it.each([
  ['an ES module', 'erp.mjs', ESM, 'dist/index.mjs'],
  ['CommonJS', 'erp.cjs', COMMONJS, 'dist/index.cjs'],
])('runs as %s from the installed tarball against the system', async (_form, file, source, entry) => {
  const project = join(outside, 'erp');
  writeFileSync(join(project, file), source);
  const given = JSON.stringify({
    gateway_url: system.gateway.url,
    integration_token: tenant.integrationToken,
    signing_secret: tenant.signingSecret,
    cpf: VALID_CPF,
  });
  const printed = JSON.parse(await run(process.execPath, [file, given], project)) as Printed;
  const installed = join(project, 'node_modules', '@payments', 'sdk', entry);
  expect(printed.loadedFrom.replace(/^file:\/\//, '')).toBe(installed);
  expect(printed.created).toBe('1 client(s) created, 0 already registered');
  expect(printed.consulted).toBe(200);
  expect(printed.verified).toBe(printed.webhookId);
  expect(printed.webhookId).toMatch(/\S+/);
  expect(printed.tampered).toBe('bad_signature');
  expect(printed.refused).toEqual({ isApiError: true, status: 401, requestId: expect.stringMatching(/^[\w.:-]+$/) });
});
