import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ESLint, Linter } from 'eslint';

/**
 * The architecture rules in eslint.config.mjs bite: files planted in the projects, linted with the
 * workspace's config as `npm run lint` lints them, fail with the rule's message (and clean files
 * pass). The planted files are linted in one ESLint run (a child process: the config is an ES module,
 * which jest's module sandbox cannot load) and removed right after it.
 */

const root = join(__dirname, '..', '..');
const tag = randomBytes(4).toString('hex');
/** Planted file path -> its source. */
const planted = new Map<string, string>();
const results = new Map<string, Linter.LintMessage[]>();

/** Plants `source` as a file next to `relativePath` (a unique name), linted in beforeAll. */
function plant(relativePath: string, source: string): string {
  const path = join(root, relativePath.replace(/\.ts$/, `-lint-probe-${tag}-${planted.size}.ts`));
  planted.set(path, source);
  return path;
}

beforeAll(() => {
  // @nx/enforce-module-boundaries reads Nx's cached project graph and skips itself (with only a warning)
  // when there is none, as in a fresh clone: build it first, without the daemon, as CI runs.
  const env = { ...process.env, NX_DAEMON: 'false', NX_TUI: 'false' };
  execFileSync(process.execPath, [require.resolve('nx/bin/nx.js'), 'show', 'projects'], {
    cwd: root,
    env,
    stdio: 'ignore',
  });
  try {
    for (const [path, source] of planted) writeFileSync(path, source);
    const run = spawnSync(
      process.execPath,
      [join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--format', 'json', ...planted.keys()],
      { cwd: root, env, encoding: 'utf8' },
    );
    if (run.status !== 0 && run.status !== 1) throw new Error(`eslint exited ${run.status}: ${run.stderr}`);
    for (const r of JSON.parse(run.stdout) as ESLint.LintResult[]) results.set(r.filePath, r.messages);
  } finally {
    for (const path of planted.keys()) rmSync(path, { force: true });
  }
}, 120_000);

/** The messages ESLint gave the planted file. */
function lintOf(path: string): Linter.LintMessage[] {
  const messages = results.get(path);
  if (!messages) throw new Error(`${path} was not linted`);
  return messages;
}

const summary = (messages: Linter.LintMessage[]) => messages.map((m) => `${m.ruleId}: ${m.message}`);

const DOMAIN_RULE = "domain layering: a service's src/domain/ imports no transport, driver or telemetry package";

describe('domain layering (no-restricted-imports in apps/*/src/domain)', () => {
  const forbidden = [
    ['nats', "import { connect } from 'nats';\nexport const c = connect;\n"],
    ['undici', "import { request } from 'undici';\nexport const r = request;\n"],
    ['koa', "import Koa from 'koa';\nexport const k = Koa;\n"],
    ['@koa/router', "import Router from '@koa/router';\nexport const r = Router;\n"],
    ['pg', "import { Pool } from 'pg';\nexport const p = Pool;\n"],
    ['@opentelemetry/api', "import { trace } from '@opentelemetry/api';\nexport const t = trace;\n"],
    ['@payments/bus', "import type { Bus } from '@payments/bus';\nexport type B = Bus;\n"],
    ['@payments/telemetry', "import { detached } from '@payments/telemetry';\nexport const d = detached;\n"],
    [
      '@payments/telemetry/sdk',
      "import { startTelemetry } from '@payments/telemetry/sdk';\nexport const s = startTelemetry;\n",
    ],
    ['@payments/db', "import { createDatabase } from '@payments/db';\nexport const c = createDatabase;\n"],
  ].map(([name, source]) => [name, plant('apps/callback-svc/src/domain/planted.ts', source)]);

  it.each(forbidden)('fails a domain file importing %s, with the rule message', (name, path) => {
    const messages = lintOf(path);
    expect(summary(messages)).toEqual([
      expect.stringContaining(`no-restricted-imports: '${name}' import is restricted`),
    ]);
    expect(messages[0].message).toContain(DOMAIN_RULE);
    expect(messages[0].message).toContain("Put such code in the service's transport layer");
  });

  const dialect = plant(
    'apps/receivables-svc/src/domain/planted.ts',
    "import { PostgresDialect } from 'kysely';\nexport const d = PostgresDialect;\n",
  );
  it("fails kysely's dialect (wiring) in a domain file", () => {
    expect(summary(lintOf(dialect))).toEqual([
      expect.stringMatching(
        /^no-restricted-imports: 'PostgresDialect' import from 'kysely' is restricted.*domain layering/,
      ),
    ]);
  });

  const relay = plant(
    'apps/booklet-svc/src/domain/planted.ts',
    "import { OutboxRelay } from '@payments/outbox';\nexport const r = OutboxRelay;\n",
  );
  it('fails the outbox relay (transport) in a domain file', () => {
    expect(summary(lintOf(relay))).toEqual([
      expect.stringMatching(
        /^no-restricted-imports: 'OutboxRelay' import from '@payments\/outbox' is restricted.*domain layering/,
      ),
    ]);
  });

  const clean = plant(
    'apps/booklet-svc/src/domain/planted.ts',
    [
      "import { randomUUID } from 'node:crypto';",
      "import { sql, type Kysely } from 'kysely';",
      "import type { Logger } from '@payments/logger';",
      "import { enqueue } from '@payments/outbox';",
      "import { formatReais } from '@payments/br-format';",
      '',
      'export async function touch(db: Kysely<Record<string, never>>, logger: Logger): Promise<string> {',
      '  const id = randomUUID();',
      '  await sql`select 1`.execute(db);',
      "  logger.info({ id, total: formatReais(1), enqueue: typeof enqueue }, 'touched');",
      '  return id;',
      '}',
      '',
    ].join('\n'),
  );
  it("passes a clean domain file: kysely's query builder, libs, node built-ins, the outbox's enqueue", () => {
    expect(summary(lintOf(clean))).toEqual([]);
  });

  const loose = plant('apps/clients-svc/src/domain/planted.ts', 'export const loose: any = 1;\n');
  it('keeps no-explicit-any an error in domain code', () => {
    const messages = lintOf(loose);
    expect(summary(messages)).toEqual([expect.stringMatching(/^@typescript-eslint\/no-explicit-any: /)]);
    expect(messages[0].severity).toBe(2);
  });
});

describe('module boundaries by tag (@nx/enforce-module-boundaries)', () => {
  const appToApp = plant(
    'apps/clients-svc/src/planted.ts',
    "import { startGateway } from '@payments/gateway';\nexport const s = startGateway;\n",
  );
  it('fails an app importing another app by its package name', () => {
    expect(summary(lintOf(appToApp))).toEqual([
      '@nx/enforce-module-boundaries: A project tagged with "type:app" can only depend on libs tagged with "type:lib"',
    ]);
  });

  const appToAppRelative = plant(
    'apps/clients-svc/src/planted.ts',
    "import { startGateway } from '../../gateway/src/server';\nexport const s = startGateway;\n",
  );
  it('fails an app importing another app by a relative path', () => {
    expect(summary(lintOf(appToAppRelative))).toEqual([
      '@nx/enforce-module-boundaries: Projects cannot be imported by a relative or absolute path, and must begin with a npm scope',
    ]);
  });

  // A lib the app does not depend on: otherwise the rule reports the cycle (lib -> app -> lib) instead.
  const libToApp = plant(
    'libs/url-safety/src/planted.ts',
    "import { startBankSandbox } from '@payments/bank-sandbox';\nexport const s = startBankSandbox;\n",
  );
  it('fails a lib importing an app', () => {
    expect(summary(lintOf(libToApp))).toEqual([
      '@nx/enforce-module-boundaries: A project tagged with "type:lib" can only depend on libs tagged with "type:lib"',
    ]);
  });

  const appToLib = plant(
    'apps/clients-svc/src/planted.ts',
    "import { taxIdDigits } from '@payments/tax-id';\nexport const t = taxIdDigits;\n",
  );
  const e2eToApp = plant(
    'e2e/support/planted.ts',
    "import { startGateway } from '@payments/gateway';\nexport const s = startGateway;\n",
  );
  it('passes an app importing a lib, and e2e importing an app', () => {
    expect(summary(lintOf(appToLib))).toEqual([]);
    expect(summary(lintOf(e2eToApp))).toEqual([]);
  });
});
