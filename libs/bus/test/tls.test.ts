import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@payments/logger';
import { BusUnavailableError, checkBus, connectBus } from '../src';
import { freePort, spawnNatsServer } from './support/nats-servers';

/** TLS to NATS by configuration: a nats-server of this test's, its certificate signed by a CA of its own. */

const logger = createLogger('bus-test', 'silent');
const dir = mkdtempSync(join(tmpdir(), 'bus-tls-'));
const file = (name: string) => join(dir, name);
let server: ChildProcess | undefined;
let url: string;

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });

/** A self-signed CA: <name>.pem and <name>-key.pem. */
function makeCa(name: string): void {
  openssl(
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${name}`],
    ...['-keyout', `${name}-key.pem`, '-out', `${name}.pem`],
  );
}

/** A certificate for localhost (nats.js checks that name for a server given by IP) signed by the CA `ca`: server.pem and server-key.pem. */
function makeServerCertificate(ca: string): void {
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    'server-key.pem',
    '-out',
    'server.csr',
  );
  writeFileSync(file('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    ...['x509', '-req', '-in', 'server.csr', '-CA', `${ca}.pem`, '-CAkey', `${ca}-key.pem`, '-CAcreateserial'],
    ...['-out', 'server.pem', '-days', '1', '-extfile', 'ext.cnf'],
  );
}

beforeAll(async () => {
  makeCa('ca');
  makeCa('other-ca');
  makeServerCertificate('ca');
  writeFileSync(
    file('nats.conf'),
    `tls {\n  cert_file: "${file('server.pem')}"\n  key_file: "${file('server-key.pem')}"\n}\n`,
  );
  const port = await freePort();
  url = `nats://127.0.0.1:${port}`;
  server = await spawnNatsServer([
    '-c',
    file('nats.conf'),
    '-js',
    '-sd',
    file('store'),
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
  ]);
}, 30_000);

afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

it('connects over TLS when NATS_TLS_CA_FILE names the CA of the server certificate', async () => {
  const bus = await connectBus({
    url,
    prefix: 'ttls',
    name: 'tls-test',
    logger,
    credentials: { natsTlsCaFile: file('ca.pem') },
  });
  try {
    expect(bus.connection.info?.tls_required).toBe(true);
    await bus.connection.flush();
  } finally {
    await bus.close();
  }
  await expect(checkBus(url, { credentials: { natsTlsCaFile: file('ca.pem') } })).resolves.toBeUndefined();
});

it('refuses a server whose certificate another CA signed, naming the TLS variables', async () => {
  const failure = await checkBus(url, { timeoutMs: 3_000, credentials: { natsTlsCaFile: file('other-ca.pem') } }).catch(
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(BusUnavailableError);
  expect(failure).toMatchObject({ problem: 'tls_failed' });
  expect((failure as Error).message).toMatch(
    /^TLS to NATS at nats:\/\/127\.0\.0\.1:\d+ failed \(.+\): check NATS_TLS_CA_FILE/,
  );
});
