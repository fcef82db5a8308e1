import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, type Bus } from '../src';
import {
  isTransientJetStreamError,
  JetStreamNotReadyError,
  retryTransient,
  STARTUP_RETRY_MS,
} from '../src/jetstream-retry';
import { freePort, spawnNatsServer } from './support/nats-servers';

// Start-up JetStream requests are tried again only while the cluster is not ready (timeouts, no
// responders, "temporarily unavailable"); anything else, a refused permission first, fails at once.
// The real-server case: a nats-server of this test's whose user may check JetStream but not create
// streams, as a misconfigured deploy/nats would be.

const logger = createLogger('bus-test', 'silent');
const natsError = (code: string, api?: { code: number; err_code: number; description: string }) =>
  Object.assign(new Error(code), { code, ...(api ? { api_error: api } : {}) });
const notAvailable = natsError('503', {
  code: 503,
  err_code: 10008,
  description: 'JetStream system temporarily unavailable',
});

describe('which errors are transient', () => {
  it.each([
    ['a request timeout', natsError('TIMEOUT'), true],
    ['no responders', natsError('503'), true],
    ['no meta leader (10008)', notAvailable, true],
    [
      'a server that cannot handle it now (10009)',
      natsError('500', { code: 500, err_code: 10009, description: 'JetStream cluster can not handle request' }),
      true,
    ],
    [
      'JetStream not enabled for the account (10039)',
      natsError('503', { code: 503, err_code: 10039, description: 'JetStream not enabled for account' }),
      false,
    ],
    [
      'a stream config conflict (10058)',
      natsError('400', {
        code: 400,
        err_code: 10058,
        description: 'stream name already in use with a different configuration',
      }),
      false,
    ],
    [
      'no suitable peers (10005)',
      natsError('400', { code: 400, err_code: 10005, description: 'no suitable peers for placement' }),
      false,
    ],
    ['a permissions violation', natsError('PERMISSIONS_VIOLATION'), false],
    ['a closed connection', natsError('CONNECTION_CLOSED'), false],
    ['a plain error', new Error('boom'), false],
  ])('%s', (_what, err, transient) => {
    expect(isTransientJetStreamError(err)).toBe(transient);
  });
});

describe('retryTransient', () => {
  it('tries again after transient failures, logging each retry with what it is for', async () => {
    const lines: string[] = [];
    const log = createLogger('bus-test', 'warn', { write: (line: string) => lines.push(line) });
    let tries = 0;
    const result = await retryTransient(
      'stream t_jobs',
      async () => {
        tries++;
        if (tries < 3) throw tries === 1 ? natsError('TIMEOUT') : notAvailable;
        return 'done';
      },
      { logger: log, firstDelayMs: 10 },
    );
    expect(result).toBe('done');
    expect(tries).toBe(3);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; target: string; retryInMs: number });
    expect(logged.map((l) => [l.target, l.retryInMs])).toEqual([
      ['stream t_jobs', 10],
      ['stream t_jobs', 20],
    ]);
    expect(logged[1].msg).toMatch(/JetStream not ready for stream t_jobs \(JetStream system temporarily unavailable/);
  });

  it('throws any other error at once, untried', async () => {
    let tries = 0;
    const conflict = natsError('400', { code: 400, err_code: 10058, description: 'stream name already in use' });
    await expect(
      retryTransient('stream t_jobs', async () => {
        tries++;
        throw conflict;
      }),
    ).rejects.toBe(conflict);
    expect(tries).toBe(1);
  });

  it('gives up when the budget is spent, as a one-line start-up problem naming the target', async () => {
    let tries = 0;
    const started = Date.now();
    const failure = await retryTransient(
      'stream t_jobs',
      async () => {
        tries++;
        throw natsError('TIMEOUT');
      },
      { budgetMs: 260, firstDelayMs: 20 },
    ).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(JetStreamNotReadyError);
    expect(failure).toMatchObject({ startupProblem: true, problem: 'jetstream_not_ready' });
    expect((failure as Error).message).toMatch(
      /^JetStream did not answer for stream t_jobs in 0 s \(\d+ tries; last: TIMEOUT\)/,
    );
    // 20 + 40 + 80 ms waited (140 ms at least); the next wait (160 ms) would pass the 260 ms budget.
    // The margin lets timers on a busy machine fire up to 120 ms late in all without changing the count.
    expect(tries).toBe(4);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(STARTUP_RETRY_MS).toBe(60_000);
  });
});

const dir = mkdtempSync(join(tmpdir(), 'bus-retry-'));
const servers: ChildProcess[] = [];

/** A nats-server of this test's with `config` (its listen line added); resolves to its URL once it is ready. */
async function startServer(name: string, config: string): Promise<string> {
  const port = await freePort();
  writeFileSync(join(dir, `${name}.conf`), `listen: 127.0.0.1:${port}\n${config}`);
  servers.push(await spawnNatsServer(['-c', join(dir, `${name}.conf`)]));
  return `nats://127.0.0.1:${port}`;
}

afterAll(() => {
  for (const child of servers) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

it('says at once that a server without JetStream has it turned off (no responders is not waited out)', async () => {
  const url = await startServer('plain', '');
  const started = Date.now();
  const failure = await connectBus({ url, prefix: 'tplain', name: 'plain', logger }).catch((err: unknown) => err);
  expect(failure).toMatchObject({ name: 'BusUnavailableError', problem: 'no_jetstream' });
  expect(Date.now() - started).toBeLessThan(2_000);
}, 30_000);

describe('on a nats-server whose user may not create streams', () => {
  let url: string;
  let bus: Bus | undefined;

  beforeAll(async () => {
    // JetStream's account check and its own inbox, nothing else: as a service user missing its stream rights.
    url = await startServer(
      'limited',
      `jetstream { store_dir: "${join(dir, 'store')}" }
authorization {
  users = [
    { user: "limited", password: "secret",
      permissions: { publish: { allow: ["$JS.API.INFO"] }, subscribe: { allow: ["_INBOX_limited.>"] } } }
  ]
}
`,
    );
  }, 30_000);

  afterAll(async () => {
    await bus?.close();
  });

  it('fails provision at once with the permissions violation, not after the retry budget', async () => {
    bus = await connectBus({
      url,
      prefix: 'tperm',
      name: 'limited',
      logger,
      credentials: { natsUser: 'limited', natsPassword: 'secret' },
    });
    const jobs: StreamSpec = { name: 'jobs', subject: 'jobs.run', consumer: 'jobs-worker', duplicateWindowMs: 60_000 };
    const started = Date.now();
    const failure = await bus.streams.provision(jobs).catch((err: unknown) => err);
    expect(failure).toMatchObject({ code: 'PERMISSIONS_VIOLATION' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
