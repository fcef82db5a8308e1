import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canRunBlocks, markedBlock, runBlock } from '../support/readme-block';
import { freePort, startSystem, type TestSystem } from '../support/system';

/**
 * The curl sessions are run as written against a started system, each pasted into bash as a reader
 * would: the README's first charge (<!-- readme-first-charge -->) and docs/first-session.md's whole
 * session (<!-- first-session -->), so neither can rot unnoticed. Both stop at the first failed step
 * with its problem body. They need bash, curl and node; without curl (not every CI image has it) the
 * tests are skipped, saying so.
 */
const runnable = canRunBlocks('readme-session.test.ts');

const count = (text: string, part: string) => text.split(part).length - 1;

const session = () => markedBlock('first-session', 'sh', 'docs/first-session.md');
const firstCharge = () => markedBlock('readme-first-charge', 'sh', 'README.md');

describe('the curl sessions of the README and docs/first-session.md', () => {
  let system: TestSystem;
  beforeAll(async () => {
    if (runnable) system = await startSystem({ withReceivables: true, withBooklets: true });
  }, 60_000);
  afterAll(async () => {
    await system?.stop();
  });

  it('carries the verification snippet of docs/api-in-short.md unchanged in its receiver', () => {
    expect(session()).toContain(markedBlock('verify-callback', 'js', 'docs/api-in-short.md').trim());
  });

  (runnable ? it : it.skip)(
    "runs the README's first charge as written",
    async () => {
      const run = await runBlock(
        firstCharge(),
        { GW: system.gateway.url, DATABASE_URL: system.databaseUrl },
        60_000,
        "the README's first charge",
      );
      if (run.code !== 0) throw new Error(`the README's first charge exited ${run.code}:\n${run.output}`);
      expect(run.output).toMatch(/"1 client\(s\) created[^\n]* -> HTTP 201/);
      expect(run.output).toMatch(/"1 receivable\(s\) received[^\n]* -> HTTP 202/);
      expect(run.output).toContain('"status_payment": "Pendente"');
      expect(run.output).toContain('"payment_type": "naodefinido"');
    },
    70_000,
  );

  (runnable ? it : it.skip)(
    "stops the README's first charge at the first failed step, showing its problem body",
    async () => {
      // A gateway address with a path no route matches: authentication answers 404 problem+json.
      const run = await runBlock(
        firstCharge(),
        { GW: `${system.gateway.url}/no-such-prefix`, DATABASE_URL: system.databaseUrl },
        60_000,
        "the README's first charge against a wrong address",
      );
      expect(run.code).not.toBe(0);
      expect(run.output).toMatch(/"status":\s*404/);
      expect(run.output).not.toContain('-> HTTP');
    },
    70_000,
  );

  (runnable ? it : it.skip)(
    'stops docs/first-session.md at the first failed step, showing its problem body',
    async () => {
      const tmp = mkdtempSync(join(tmpdir(), 'readme-session-'));
      try {
        // A gateway address with a path no route matches: authentication answers 404 problem+json.
        const run = await runBlock(
          session(),
          {
            GW: `${system.gateway.url}/no-such-prefix`,
            SANDBOX: system.sandboxUrl ?? '',
            RECEIVER_PORT: String(await freePort()),
            DATABASE_URL: system.databaseUrl,
            TMPDIR: tmp,
          },
          60_000,
          'the first session against a wrong address',
        );
        expect(run.code).not.toBe(0);
        expect(run.output).toMatch(/"status":\s*404/);
        expect(run.output).not.toContain('-> HTTP');
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },
    70_000,
  );

  (runnable ? it : it.skip)(
    'runs docs/first-session.md as written against a running system',
    async () => {
      const tmp = mkdtempSync(join(tmpdir(), 'readme-session-'));
      try {
        const run = await runBlock(
          session(),
          {
            GW: system.gateway.url,
            SANDBOX: system.sandboxUrl ?? '',
            RECEIVER_PORT: String(await freePort()),
            DATABASE_URL: system.databaseUrl, // the admin CLI creates the tenant where this system reads it
            TMPDIR: tmp, // the session's mktemp -d lands here, removed below
          },
          110_000,
          'the first session',
        );
        if (run.code !== 0) throw new Error(`the first session exited ${run.code}:\n${run.output}`);
        const out = run.output;

        // Statuses shown with -w ' -> HTTP %{http_code}'.
        expect(out).toContain('"clients_already_registered":[]} -> HTTP 201');
        expect(out).toMatch(/"2 receivable\(s\) received[^\n]* -> HTTP 202/);
        expect(out).toMatch(/"type":"preparing"[^\n]* -> HTTP 202/);
        expect(out).toMatch(/"the receivable was sent for cancellation[^\n]* -> HTTP 202/);
        expect(out).toMatch(/HTTP\/1\.1 202 Accepted\s+idempotent-replayed: true/i);
        expect(out).toMatch(/"the receivable is already cancelled"[^\n]* -> HTTP 409/);
        expect(out).toMatch(/"status":"paid"[^\n]* -> HTTP 200/);

        // The spec's spellings, each where it belongs.
        expect(out).toMatch(/^Bearer$/m);
        expect(out).toContain('"token_type": "bearer"');
        expect(out).toContain('"payment_type": "naodefinido"');
        expect(out).toContain('"paymento_type": "Pix"');

        // Callbacks: every one checked by the receiver; the registered, booklet, paid and cancellation ones arrived.
        expect(out).not.toContain('signature INVALID');
        expect(count(out, 'signature valid')).toBeGreaterThanOrEqual(5);
        expect(out).toMatch(/"our_number": "\d{11}"/);
        expect(out).toMatch(/booklet: HTTP 200, application\/pdf, \d+ bytes/);
        expect(out).toContain('"payment_type": "Pix"');
        expect(out).toContain('"message": "the receivable was cancelled"');

        // The callback list, then one event with its attempts.
        expect(out).toContain('"event_type": "receivable.registered"');
        expect(out).toMatch(/"attempts": \[\s*\{\s*"attempted_at": "[^"]+",\s*"status_code": 200/);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
