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
} from './launcher';

/*
 * Documented blocks run as written: the fenced block after a marker comment (<!-- first-session -->)
 * in the README or a page of docs/ is pasted into bash, as a reader would, so the docs cannot rot
 * unnoticed.
 */
const documents = new Map<string, string>();

/** A document of the repository by its path from the root, read once. */
function documentText(file: string): string {
  const text = documents.get(file) ?? readFileSync(join(ROOT, file), 'utf8');
  documents.set(file, text);
  return text;
}

/** Where a block is documented: the file (from the repository root) and the marker before it. */
export interface DocumentedBlock {
  file: string;
  marker: string;
}

/** The code of the fenced block that follows a marker comment in `file` (the README by default). */
export function markedBlock(marker: string, language = 'sh', file = 'README.md'): string {
  const found = new RegExp(`<!-- ${marker} -->\\s*\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(
    documentText(file),
  )?.[1];
  if (found === undefined) throw new Error(`${file} has no \`\`\`${language} block after <!-- ${marker} -->`);
  return found;
}

const hasCommand = (command: string) => spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;

/** Whether bash and curl are on the PATH (not every CI image has curl); when not, warns that `file` is skipped. */
export function canRunBlocks(file: string): boolean {
  const runnable = hasCommand('bash') && hasCommand('curl');
  if (!runnable) console.warn(`${file}: skipped, it needs bash and curl on the PATH`);
  return runnable;
}

export interface BlockRun {
  code: number | null;
  output: string;
}

/**
 * Runs the block with bash -e (a failing step stops it) in the repository root, its stdout and stderr
 * in one output; `what` names it when it does not finish in `timeoutMs`.
 */
export function runBlock(
  block: string,
  env: Record<string, string>,
  timeoutMs: number,
  what: string,
): Promise<BlockRun> {
  // A receiver runs in the background; whatever happens, it must not outlive the block.
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
      reject(new Error(`${what} did not finish in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * One test that runs a documented block against a real `npm start` of its own (its own ports,
 * database test_readme_<name>_… and bus prefix), as a new user would, then hands `expectations` the
 * block's output. Stopped and cleaned up after all; skipped, saying so, without bash and curl.
 * `label` names the block in a timeout ("the <label> block").
 */
export function documentedBlockTest(
  block: DocumentedBlock,
  name: string,
  label: string,
  title: string,
  expectations: (output: string) => void,
): void {
  const runnable = canRunBlocks(`readme-${name}.test.ts`);
  const database = `test_readme_${name}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const launched: Launched[] = [];

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
    title,
    async () => {
      const ports = await freeAppPorts();
      const taken = new Set<number>(Object.values(ports));
      // Distinct from one another and from the apps' ports (each draw only checks nothing listens yet).
      const [interPort, adminPort] = [await freePort(taken), await freePort(taken)];
      const run = npm(['start'], {
        ...asEnv(ports),
        BANK_SANDBOX_INTER_PORT: String(interPort),
        ADMIN_PORT: String(adminPort),
        DATABASE_URL: databaseUrl,
        BUS_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        // As a user runs it (jest sets NODE_ENV=test, where the sandbox runs neither its mutual TLS
        // port for PIX nor its Inter dialect).
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
      const receiverPort = await freePort(taken);
      const result = await runBlock(
        markedBlock(block.marker, 'sh', block.file),
        {
          GW: `http://localhost:${ports.PORT}`,
          SANDBOX: `http://localhost:${ports.BANK_SANDBOX_PORT}`,
          RECEIVER_PORT: String(receiverPort),
          DATABASE_URL: databaseUrl,
          NODE_ENV: 'development',
        },
        240_000,
        `the ${label} block of ${block.file}`,
      );
      // The apps' own warnings and errors too: what a 500 in the block was.
      if (result.code !== 0)
        throw new Error(`the block exited ${result.code}:\n${result.output}\nnpm start:\n${run.output.slice(-8000)}`);
      expectations(result.output);
    },
    420_000,
  );
}
