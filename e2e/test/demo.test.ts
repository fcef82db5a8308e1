import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startSystem, type TestSystem } from '../support/system';

const root = join(__dirname, '..', '..');

interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs scripts/demo.ts as `npm run demo` does (tsx), in its own process, with this environment on top of ours. */
function runDemo(env: Record<string, string>, timeoutMs = 100_000): Promise<DemoRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the demo did not finish in ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The printed line of a step: number, title, time in ms, facts. */
function stepLine(stdout: string, title: string): string {
  const line = stdout
    .split('\n')
    .find((l) => new RegExp(`^\\s*\\d+\\. ${title.replace(/[()]/g, '\\$&')}\\s+\\d+ ms  `).test(l));
  if (!line) throw new Error(`no line for step "${title}" in:\n${stdout}`);
  return line;
}

let system: TestSystem;
beforeAll(async () => {
  system = await startSystem({ withReceivables: true, withBooklets: true });
});
afterAll(async () => {
  await system?.stop();
});

it('npm run demo takes a tenant from the admin CLI and walks the whole session, saving the booklet PDF', async () => {
  const out = mkdtempSync(join(tmpdir(), 'demo-output-'));
  const run = await runDemo({
    GATEWAY_URL: system.gateway.url,
    BANK_SANDBOX_URL: system.sandboxUrl!,
    DATABASE_URL: system.databaseUrl, // the admin CLI writes the tenant where this system reads it
    DEMO_OUTPUT_DIR: out,
    DEMO_TIMEOUT_MS: '40000',
  });
  if (run.code !== 0) throw new Error(`demo exited ${run.code}:\n${run.stdout}\n${run.stderr}`);

  expect(stepLine(run.stdout, 'check the system')).toContain('(mode normal)');
  expect(stepLine(run.stdout, 'create tenant (admin CLI)')).toMatch(
    /tenant [0-9a-f-]{36} .*npm run admin -- tenant create --json/,
  );
  expect(stepLine(run.stdout, 'authenticate')).toContain('token_type Bearer');
  expect(stepLine(run.stdout, 'start callback receiver')).toMatch(/url_callback http:\/\/127\.0\.0\.1:\d+\//);
  expect(stepLine(run.stdout, 'register clients (CPF and CNPJ)')).toContain('201: 2 created');
  expect(stepLine(run.stdout, 'issue charges (slips and PIX)')).toContain('202: 6 charges (4 hybrid slips, 2 PIX)');
  const registered = stepLine(run.stdout, 'wait for registered callbacks');
  expect(registered).toContain('6/6 registered, signatures valid');
  expect(registered).toMatch(/line \d{5}\.\d{5} \d{5}\.\d{6} \d{5}\.\d{6} \d \d{14}/);
  expect(registered).toMatch(/PIX 000201\S*br\.gov\.bcb\.pix/);
  expect(stepLine(run.stdout, 'pay the PIX charge at the sandbox')).toContain(
    'paid by pix at the bank: paid, R$ 89,90',
  );
  expect(stepLine(run.stdout, 'wait for the paid callback')).toContain(
    'payment_type Pix, amount_paid R$ 89,90, fee_amount R$ 0,89',
  );
  expect(stepLine(run.stdout, 'cancel a slip')).toContain('202 success');
  expect(stepLine(run.stdout, 'wait for the cancellation callback')).toContain('status success');
  expect(stepLine(run.stdout, 'request the booklet (carnê)')).toContain('202 preparing');
  expect(stepLine(run.stdout, 'wait for the booklet callback')).toContain(
    `sent: signed link ${system.gateway.url}/api/v1/bank-slip-booklet/downloads/`,
  );
  expect(stepLine(run.stdout, 'search all charges')).toContain('6 found: 4 Pendente, 1 Aprovada, 1 Cancelada');
  expect(stepLine(run.stdout, 'search approved charges')).toContain('1 found:');
  expect(stepLine(run.stdout, 'consult the paid charge')).toContain('Aprovada, payment_type Pix');
  expect(run.stdout).toMatch(/Summary: 17 steps passed in \d+ ms; 9 callbacks received, every signature valid/);

  const files = readdirSync(out);
  expect(files).toEqual([expect.stringMatching(/^booklet-[0-9a-f-]{36}\.pdf$/)]);
  expect(readFileSync(join(out, files[0])).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  expect(stepLine(run.stdout, 'download the booklet PDF')).toContain(join(out, files[0]));
  expect(run.stderr).toBe('');
}, 120_000);

it('exits 1 naming the failed step when the gateway is not running', async () => {
  const port = await freePort();
  const run = await runDemo({
    GATEWAY_URL: `http://127.0.0.1:${port}`,
    BANK_SANDBOX_URL: system.sandboxUrl!,
    DATABASE_URL: system.databaseUrl,
  });
  expect(run.code).toBe(1);
  expect(run.stdout).toMatch(/ 1\. check the system\s+\d+ ms {2}FAILED/);
  expect(run.stderr).toContain(`step 1 (check the system) failed: gateway not reachable at http://127.0.0.1:${port}`);
  expect(run.stderr).toContain('run npm start first');
}, 30_000);
