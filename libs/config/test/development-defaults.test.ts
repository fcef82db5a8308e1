import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  databaseCredentialChecks,
  DEVELOPMENT_NATS_PASSWORDS,
  DEVELOPMENT_NATS_USERS,
  isDevelopmentDefault,
  productionSecretProblems,
} from '../src';

/**
 * Every development default the repo declares is refused in production: this reads the repo (the
 * compose file, the NATS config, the deploy's secret files and the apps' and libs' sources) rather
 * than a list, so a default added later without its refusal fails here.
 */
const ROOT = join(__dirname, '..', '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  const absolute = join(ROOT, dir);
  return readdirSync(absolute).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist') return [];
    const path = join(absolute, name);
    if (statSync(path).isDirectory()) return filesUnder(relative(ROOT, path), keep);
    return keep(path) ? [relative(ROOT, path)] : [];
  });
}

/** The production code: each app's and lib's src, and the scripts. */
const sources = ['apps', 'libs']
  .flatMap((top) => readdirSync(join(ROOT, top)).map((project) => join(top, project, 'src')))
  .filter((dir) => statSync(join(ROOT, dir), { throwIfNoEntry: false })?.isDirectory())
  .concat('scripts')
  .flatMap((dir) => filesUnder(dir, (path) => path.endsWith('.ts') && !path.endsWith('.d.ts')));

/** Development constants that are no secret: where the bank sandbox keeps its CA, and its port. */
const NOT_SECRETS: Record<string, string> = {
  DEV_INTER_SANDBOX_DIR: 'a directory',
  DEV_INTER_SANDBOX_CA_FILE: 'a public certificate',
  DEV_INTER_SANDBOX_PORT: 'a port',
};

it('reads a good part of the repo (the scan itself works)', () => {
  expect(sources.length).toBeGreaterThan(100);
  expect(sources).toContain(join('libs', 'config', 'src', 'production-secrets.ts'));
});

it("refuses every fallback of docker-compose.yml (each NATS user's password among them)", () => {
  const fallbacks = [...read('docker-compose.yml').matchAll(/\$\{([A-Z0-9_]+):-([^}]*)\}/g)]
    .map(([, variable, value]) => ({ variable, value }))
    .filter(({ value }) => value !== '');
  expect(fallbacks.length).toBeGreaterThan(0);
  for (const { variable, value } of fallbacks)
    expect({ variable, refused: isDevelopmentDefault(value, DEVELOPMENT_NATS_PASSWORDS) }).toEqual({
      variable,
      refused: true,
    });
  const natsFallbacks = fallbacks.filter(({ variable }) => /^NATS_.*PASSWORD$/.test(variable)).map((f) => f.value);
  expect(new Set(natsFallbacks)).toEqual(new Set(DEVELOPMENT_NATS_PASSWORDS));
});

it("refuses docker-compose.yml's Postgres password, as it sets it and as its apps' DATABASE_URL gives it", () => {
  const compose = read('docker-compose.yml');
  const passwords = [
    ...[...compose.matchAll(/POSTGRES_PASSWORD:\s*(\S+)/g)].map(([, password]) => password),
    ...[...compose.matchAll(/postgres:\/\/[^:/@\s]+:([^@\s]+)@/g)].map(([, password]) => password),
  ];
  expect(passwords.length).toBeGreaterThan(0);
  for (const password of passwords)
    expect(
      productionSecretProblems(
        databaseCredentialChecks({ databaseUrl: `postgres://app:${encodeURIComponent(password)}@db/x` }),
      ),
    ).toHaveLength(1);
});

it("knows every user of deploy/nats, so each one's development password is refused", () => {
  const users = [...read('deploy/nats/nats-server.conf.template').matchAll(/^\s*user:\s*"([^"]+)"/gm)].map(
    ([, user]) => user,
  );
  expect(users).toContain('admin-cli');
  expect(new Set(users)).toEqual(new Set(DEVELOPMENT_NATS_USERS));
});

it("commits no secret's value to the deploy's secret files (a value in the repo is public)", () => {
  for (const file of filesUnder('deploy', (path) => path.endsWith('.env'))) {
    const filled = read(file)
      .split('\n')
      .map((line) => /^([A-Za-z0-9_]+)=(.*)$/.exec(line.trim()))
      .filter((m): m is RegExpExecArray => m !== null && /PASSWORD|SECRET|KEY|TOKEN/i.test(m[1]) && m[2] !== '');
    expect({ file, filled: filled.map((m) => m[1]) }).toEqual({ file, filled: [] });
  }
});

it('refuses every DEV_ constant of the sources in production: some app lists it as a development default', () => {
  const listed = new Set(
    sources.flatMap((file) =>
      [...read(file).matchAll(/developmentDefaults:\s*\[([^\]]*)\]/g)].flatMap(([, names]) =>
        names.split(',').map((name) => name.trim()),
      ),
    ),
  );
  const declared = sources.flatMap((file) =>
    [...read(file).matchAll(/export const (DEV_[A-Z0-9_]+)\b/g)].map(([, name]) => ({ file, name })),
  );
  expect(declared.length).toBeGreaterThan(3);
  const unrefused = declared.filter(({ name }) => !(name in NOT_SECRETS) && !listed.has(name));
  expect(unrefused).toEqual([]);
});

it('checks in production every secret variable an app falls back to a default for', () => {
  for (const file of sources) {
    const text = read(file);
    const checked = new Set([...text.matchAll(/variable:\s*'([A-Z0-9_]+)'/g)].map(([, variable]) => variable));
    const defaulted = [...text.matchAll(/envString\(\s*'([A-Z0-9_]*(?:SECRET|KEY|PASSWORD|TOKEN)[A-Z0-9_]*)'/g)]
      .map(([, variable]) => variable)
      // A PIX key is an address to pay to, public by design, not a secret.
      .filter((variable) => variable !== 'BANK_SANDBOX_PIX_KEY');
    expect({ file, unchecked: defaulted.filter((v) => !checked.has(v)) }).toEqual({ file, unchecked: [] });
  }
});

it('refuses every development- value written in the sources', () => {
  const values = sources.flatMap((file) =>
    [...read(file).matchAll(/['"`](development-[A-Za-z0-9_.-]*)['"`]/g)].map(([, value]) => value),
  );
  expect(values).toContain('development-download-link-secret');
  for (const value of values) expect({ value, refused: isDevelopmentDefault(value) }).toEqual({ value, refused: true });
});
