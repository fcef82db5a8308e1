import { parseArgs } from 'node:util';

/** What the demo talks to and where it writes; flags win over the environment. */
export interface DemoOptions {
  gatewayUrl: string;
  /** BANK_SANDBOX_URL, or --sandbox. */
  bankSandboxUrl: string;
  outputDir: string;
  /** Longest wait for any one callback or answer. */
  timeoutMs: number;
  /** Address the callback receiver listens on. */
  listenHost: string;
  /** Host written into url_callback (e.g. host.docker.internal when callback-svc runs in Docker). */
  callbackHost: string;
  /** The admin CLI's --json output, to skip running the CLI (e.g. created with docker compose exec). */
  tenantJson?: string;
  help: boolean;
}

export const USAGE = `npm run demo [-- options]: walks a running system (npm start) through a whole ERP session.

  --gateway <url>        gateway base URL       (env GATEWAY_URL, default http://127.0.0.1:3000)
  --sandbox <url>        bank sandbox base URL  (env BANK_SANDBOX_URL, default http://127.0.0.1:3100)
  --out <dir>            where the booklet PDF is saved (env DEMO_OUTPUT_DIR, default ./demo-output)
  --timeout <ms>         longest wait for each callback (env DEMO_TIMEOUT_MS, default 60000)
  --callback-host <host> host put in url_callback (env DEMO_CALLBACK_HOST, default 127.0.0.1);
                         any other host makes the receiver listen on 0.0.0.0
  --help                 this text

The tenant is created with \`npm run admin -- tenant create --json\` (it needs DATABASE_URL when the
database is not the default); set DEMO_TENANT_JSON to that command's output to skip it.`;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export function loadOptions(argv: string[], env: NodeJS.ProcessEnv): DemoOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      gateway: { type: 'string' },
      sandbox: { type: 'string' },
      out: { type: 'string' },
      timeout: { type: 'string' },
      'callback-host': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const callbackHost = values['callback-host'] ?? env.DEMO_CALLBACK_HOST ?? '127.0.0.1';
  return {
    gatewayUrl: trimSlash(values.gateway ?? env.GATEWAY_URL ?? 'http://127.0.0.1:3000'),
    bankSandboxUrl: trimSlash(values.sandbox ?? env.BANK_SANDBOX_URL ?? 'http://127.0.0.1:3100'),
    outputDir: values.out ?? env.DEMO_OUTPUT_DIR ?? 'demo-output',
    timeoutMs: positiveInt(values.timeout ?? env.DEMO_TIMEOUT_MS ?? '60000', 'timeout'),
    listenHost: LOOPBACK.has(callbackHost) ? '127.0.0.1' : '0.0.0.0',
    callbackHost,
    tenantJson: env.DEMO_TENANT_JSON || undefined,
    help: values.help === true,
  };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function positiveInt(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${text}"`);
  return n;
}
