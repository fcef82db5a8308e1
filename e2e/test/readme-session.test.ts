import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canRunBlocks, markedBlock, runBlock } from '../support/readme-block';
import { freePort, startSystem, type TestSystem } from '../support/system';

/**
 * The README's "first session with curl" is run as written: the block marked <!-- readme-session --> is
 * pasted into bash (as a reader would) against a started system, so the README cannot rot unnoticed.
 * It needs bash, curl and node; without curl (not every CI image has it) the test is skipped, saying so.
 */
const runnable = canRunBlocks('readme-session.test.ts');

const count = (text: string, part: string) => text.split(part).length - 1;

describe('the README curl session', () => {
  let system: TestSystem;
  beforeAll(async () => {
    if (runnable) system = await startSystem({ withReceivables: true, withBooklets: true });
  }, 60_000);
  afterAll(async () => {
    await system?.stop();
  });

  it('carries the README verification snippet unchanged in its receiver', () => {
    expect(markedBlock('readme-session', 'sh')).toContain(markedBlock('verify-callback', 'js').trim());
  });

  (runnable ? it : it.skip)(
    'runs as written against a running system',
    async () => {
      const tmp = mkdtempSync(join(tmpdir(), 'readme-session-'));
      try {
        const run = await runBlock(
          markedBlock('readme-session', 'sh'),
          {
            GW: system.gateway.url,
            SANDBOX: system.sandboxUrl!,
            RECEIVER_PORT: String(await freePort()),
            DATABASE_URL: system.databaseUrl, // the admin CLI creates the tenant where this system reads it
            TMPDIR: tmp, // the session's mktemp -d lands here, removed below
          },
          110_000,
          'the README session',
        );
        if (run.code !== 0) throw new Error(`the README session exited ${run.code}:\n${run.output}`);
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
