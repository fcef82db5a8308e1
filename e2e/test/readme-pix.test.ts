import { randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  asEnv,
  deleteStreams,
  dropDatabase,
  freeAppPorts,
  freePort,
  killLeftovers,
  npm,
  ready,
  ROOT,
  waitFor,
  type Launched,
} from '../support/launcher';

/*
 * The README's pix account path is run as written: the block marked <!-- readme-pix --> is pasted
 * into bash against a real `npm start` (its own ports, database and bus prefix), as a new user would:
 * a PIX API integration from the sandbox, the tenant's pix account set with the admin CLI, a PIX
 * charge registered as a cobv (our_number its txid, the bank's BR Code, no line or barcode) and paid
 * by its txid with its paid callback, and a slip refused at intake. It needs bash and curl; without
 * curl the test is skipped, saying so.
 */
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

function markedBlock(marker: string): string {
  const found = new RegExp(`<!-- ${marker} -->\\s*\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(readme)?.[1];
  if (found === undefined) throw new Error(`README.md has no \`\`\`sh block after <!-- ${marker} -->`);
  return found;
}

const hasCommand = (command: string) => spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
const runnable = hasCommand('bash') && hasCommand('curl');
if (!runnable) console.warn('readme-pix.test.ts: skipped, it needs bash and curl on the PATH');

const database = `test_readme_pix_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
const prefix = `t${randomBytes(5).toString('hex')}`;
const launched: Launched[] = [];

/** Runs the block with bash -e (a failing step stops it) in the repository root; its background jobs end with it. */
function runBlock(
  block: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  const script = `trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${block}\n`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      reject(new Error(`the README pix block did not finish in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

afterAll(async () => {
  for (const run of launched) {
    try {
      if (run.child.exitCode === null) process.kill(-run.pid, 'SIGINT');
    } catch {
      // already gone
    }
  }
  await Promise.all(launched.map((run) => run.exit(30_000).catch(() => undefined)));
  killLeftovers(`BUS_PREFIX=${prefix}`, launched);
  await dropDatabase(database).catch(() => undefined);
  await deleteStreams(prefix).catch(() => undefined);
}, 60_000);

(runnable ? it : it.skip)(
  "the README's pix account path runs as written against npm start",
  async () => {
    const ports = await freeAppPorts();
    const taken = new Set<number>(Object.values(ports));
    // Distinct from one another and from the apps' ports (each draw only checks nothing listens yet).
    const distinctPort = async (): Promise<number> => {
      let port = await freePort();
      while (taken.has(port)) port = await freePort();
      taken.add(port);
      return port;
    };
    const [interPort, adminPort] = [await distinctPort(), await distinctPort()];
    const run = npm(['start'], {
      ...asEnv(ports),
      BANK_SANDBOX_INTER_PORT: String(interPort),
      ADMIN_PORT: String(adminPort),
      DATABASE_URL: databaseUrl,
      BUS_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      // As a user runs it (jest sets NODE_ENV=test, where the sandbox's mutual TLS port does not run).
      NODE_ENV: 'development',
    });
    launched.push(run);
    await waitFor(
      async () => {
        if (run.child.exitCode !== null) throw new Error(`npm start exited ${run.child.exitCode}:\n${run.output}`);
        return (await Promise.all(Object.values(ports).map(ready))).every(Boolean);
      },
      120_000,
      'every app to answer /readyz 200',
    );
    // Drawn just before the block listens on it: a port drawn before npm start's minute of booting
    // could be taken meanwhile by another test's server.
    const receiverPort = await distinctPort();
    const result = await runBlock(
      markedBlock('readme-pix'),
      {
        GW: `http://localhost:${ports.PORT}`,
        SANDBOX: `http://localhost:${ports.BANK_SANDBOX_PORT}`,
        RECEIVER_PORT: String(receiverPort),
        DATABASE_URL: databaseUrl,
        NODE_ENV: 'development',
      },
      240_000,
    );
    // The apps' own warnings and errors too: what a 500 in the block was.
    if (result.code !== 0)
      throw new Error(`the block exited ${result.code}:\n${result.output}\nnpm start:\n${run.output.slice(-8000)}`);
    const output = result.output;
    expect(output).toContain('"provider":"pix"');
    // Registered as a cobv (the block prints its payment_data indented): no line, barcode or PDF,
    // the txid as our_number, the bank's BR Code and a QR image link of the gateway.
    expect(output).toMatch(/"our_number": "rcv[0-9a-f]{32}"/);
    expect(output).toMatch(/"typeable_line": ""/);
    expect(output).toMatch(/"barcode": ""/);
    expect(output).toMatch(/"pdf": ""/);
    expect(output).toMatch(/"pix_copy_and_paste": "000201/);
    expect(output).toMatch(/"qrcode_image": "https?:\/\/[^"]+"/);
    expect(output).toContain('qrcode -> HTTP 200, image/png');
    expect(output).toContain('pay -> HTTP 200');
    expect(output.match(/"type":"paid"/g)).toHaveLength(1);
    expect(output).toContain('"code":"slip_not_supported"');
    expect(output).toMatch(/"path":"\/0\/payment_method"/);
    expect(output).toContain(' -> HTTP 422');
  },
  420_000,
);
