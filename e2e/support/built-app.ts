import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { provisionFromEnv as provisionBusFor } from '@payments/gateway/src/transport/bus/bus-provision';

const root = join(__dirname, '..', '..');

/** Each app's port variable (its HTTP or ops server answers /readyz there). */
export const PORT_VARIABLES = {
  gateway: 'PORT',
  'bank-sandbox': 'BANK_SANDBOX_PORT',
  'receivables-svc': 'RECEIVABLES_PORT',
  'clients-svc': 'CLIENTS_PORT',
  'callback-svc': 'CALLBACK_PORT',
  'booklet-svc': 'BOOKLET_PORT',
  console: 'CONSOLE_PORT',
} as const;

export type AppName = keyof typeof PORT_VARIABLES;

/** A file of an app's build output (`nx run <app>:build`, i.e. `npm run build`); fails if it was not built. */
export function builtFile(app: AppName, file = 'main.js'): string {
  const path = join(root, 'dist', 'apps', app, file);
  if (!existsSync(path)) throw new Error(`${path} is missing: build the apps first (npm run build)`);
  return path;
}

/**
 * The environment a built app gets: this process's, without anything that would load TypeScript
 * support (NODE_OPTIONS could carry `--import tsx`), plus the given variables.
 */
export function builtAppEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.NODE_OPTIONS;
  return { ...base, ...env };
}

/**
 * An app run from its build output with plain `node dist/apps/<app>/main.js`, as the production
 * image runs it: no tsx, and its working directory is not the repository, so nothing can lean on
 * the sources or on the current directory.
 */
export class BuiltApp {
  output = '';
  private child?: ChildProcess;
  private starting?: Promise<void>;
  private exited?: { code: number | null; signal: NodeJS.Signals | null };

  constructor(
    readonly app: AppName,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The command line it was started with. */
  get args(): string[] {
    return this.child?.spawnargs ?? [];
  }

  /**
   * Provisions the bus (idempotent: the services only check it at start, as npm start and the
   * deploys provision it first), then starts the app; waitReady and stop wait for both.
   */
  start(): this {
    this.starting = provisionBusFor(builtAppEnv(this.env)).then(
      () => this.launch(),
      (err: unknown) => {
        this.output += `bus provision failed: ${String(err)}\n`;
        this.exited = { code: null, signal: null };
      },
    );
    return this;
  }

  private launch(): void {
    const child = spawn(process.execPath, [builtFile(this.app)], {
      cwd: tmpdir(),
      env: builtAppEnv({ LOG_LEVEL: 'info', ...this.env, [PORT_VARIABLES[this.app]]: String(this.port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const collect = (chunk: Buffer) => {
      // Enough to see why it failed, without holding every log line of a long run.
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.once('exit', (code, signal) => (this.exited = { code, signal }));
  }

  /** Polls GET /readyz until it answers 200; fails at once if the process exits. Resolves with the ms it took. */
  async waitReady(timeoutMs = 60_000): Promise<number> {
    const started = Date.now();
    for (;;) {
      if (this.exited)
        throw new Error(
          `${this.app} exited (${this.exited.code ?? this.exited.signal}) before it was ready:\n${this.output}`,
        );
      const ok = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
        (res) => res.status === 200,
        () => false,
      );
      if (ok) return Date.now() - started;
      if (Date.now() - started > timeoutMs)
        throw new Error(`${this.app} not ready in ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. Resolves with its exit code (null if killed). */
  async stop(graceMs = 10_000): Promise<number | null> {
    await this.starting;
    const child = this.child;
    if (!child) return null;
    if (this.exited) return this.exited.code;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The npm packages a bundle requires that resolve, from dist/, to another copy than the one its sources
 * import. The bundle leaves npm packages external, so `require('ajv')` in the built file is resolved from
 * dist/apps/<app>/ (the root node_modules), while libs/contracts/src resolved it from its own folder
 * first: when npm hoists another major version to the root (eslint's ajv 6 beside our ajv 8), the built
 * app would load the wrong one. Each mismatch: "ajv: libs/contracts/src/validation.ts uses <path>, the
 * build loads <path>".
 */
export function externalsResolvedElsewhere(app: AppName): string[] {
  const meta = JSON.parse(readFileSync(builtFile(app, 'meta.json'), 'utf8')) as EsbuildMeta;
  const fromDist = createRequire(builtFile(app));
  const problems: string[] = [];
  for (const [input, { imports }] of Object.entries(meta.inputs)) {
    const fromSource = createRequire(join(root, input));
    for (const { path, external } of imports) {
      // esbuild's meta also lists relative imports it dropped as type-only (marked external): not packages.
      if (!external || path.startsWith('.') || path.startsWith('node:') || isBuiltin(path)) continue;
      const used = packageRoot(fromSource, path);
      const loaded = packageRoot(fromDist, path);
      if (used !== loaded) problems.push(`${path}: ${input} uses ${used}, the build loads ${loaded}`);
    }
  }
  return [...new Set(problems)];
}

interface EsbuildMeta {
  inputs: Record<string, { imports: Array<{ path: string; external?: boolean }> }>;
}

/** The real folder of the package a require of `specifier` lands in ("not found" when none). */
function packageRoot(req: NodeJS.Require, specifier: string): string {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
  try {
    const file = realpathSync(req.resolve(specifier));
    const marker = `${sep}node_modules${sep}${name}${sep}`;
    const at = file.lastIndexOf(marker);
    return at === -1 ? file : file.slice(0, at + marker.length - 1);
  } catch {
    return 'not found';
  }
}
