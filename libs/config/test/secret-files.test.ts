import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  DEVELOPMENT_NATS_PASSWORDS,
  busCredentialChecks,
  envOptional,
  envString,
  loadCommonConfig,
  productionSecretProblems,
} from '../src';

/** Secret settings read from files (`<NAME>_FILE`), with real files in a temporary folder. */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'config-secret-files-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

it('reads a secret setting from the file its _FILE variable names, without the trailing newline', () => {
  const url = 'postgres://receivables_svc:s3cret@pg.example.com:5432/receivables';
  const config = loadCommonConfig({
    DATABASE_URL_FILE: file('database-url', `${url}\n`),
    NATS_PASSWORD_FILE: file('nats-password', 'p0123abcd\r\n'),
  });
  expect(config.databaseUrl).toBe(url);
  expect(config.natsPassword).toBe('p0123abcd');
  expect(envOptional('PROVIDER_API_KEY', { PROVIDER_API_KEY_FILE: file('key', 'k\n\n') })).toBe('k');
});

it('keeps the rest of the file as it is: inner newlines and leading spaces', () => {
  const text = ' first line\nsecond line';
  expect(envOptional('CREDENTIALS_PREVIOUS_KEYS', { CREDENTIALS_PREVIOUS_KEYS_FILE: file('keys', `${text}\n`) })).toBe(
    text,
  );
});

it('refuses both the variable and its file, naming both', () => {
  const env = { DATABASE_URL: 'postgres://a@b/c', DATABASE_URL_FILE: file('url', 'postgres://d@e/f\n') };
  expect(() => loadCommonConfig(env)).toThrow(ConfigError);
  expect(() => loadCommonConfig(env)).toThrow('DATABASE_URL and DATABASE_URL_FILE are both set: set one of them');
});

it('names the _FILE variable and the path of a file it cannot read', () => {
  const path = join(dir, 'missing');
  expect(() => envString('DOWNLOAD_LINK_SECRET', 'x', { DOWNLOAD_LINK_SECRET_FILE: path })).toThrow(
    `DOWNLOAD_LINK_SECRET_FILE: cannot read ${path} (ENOENT)`,
  );
});

it('takes an empty file, or an empty _FILE, as unset: the default, or missing in production', () => {
  expect(envString('PROVIDER_API_KEY', 'fallback', { PROVIDER_API_KEY_FILE: file('empty', '\n') })).toBe('fallback');
  expect(envString('PROVIDER_API_KEY', 'fallback', { PROVIDER_API_KEY_FILE: '', PROVIDER_API_KEY: 'set' })).toBe('set');
  expect(
    productionSecretProblems([
      {
        variable: 'CONSOLE_SESSION_KEY',
        value: envOptional('CONSOLE_SESSION_KEY', { CONSOLE_SESSION_KEY_FILE: file('e', '') }),
      },
    ]),
  ).toEqual(['CONSOLE_SESSION_KEY is missing']);
});

it('compares a secret from a file as one from the variable: a development default is still refused', () => {
  const natsPassword = envOptional('NATS_PASSWORD', {
    NATS_PASSWORD_FILE: file('nats', `${DEVELOPMENT_NATS_PASSWORDS[0]}\n`),
  });
  expect(productionSecretProblems(busCredentialChecks({ natsUser: 'gateway', natsPassword }))).toEqual([
    'NATS_PASSWORD is the public development default',
  ]);
});

it('reads no file for a setting that is not a secret', () => {
  expect(envString('BUS_PREFIX', 'pay', { BUS_PREFIX_FILE: file('prefix', 'other') })).toBe('pay');
});
