import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import type { FuzzCase } from './cases';
import type { GeneratedCase } from './variants';

/** The credentials a case is sent with: one tenant's integration token and access token. */
export interface Credentials {
  integrationToken: string;
  accessToken: string;
}

export interface Answer {
  status: number;
  contentType: string;
  /** The first 2 KB of the answer. */
  text: string;
  ms: number;
}

/**
 * Keeps idle connections 1 s, well inside the gateway's keep-alive timeout (Node's 5 s): reusing a
 * connection the server is closing at that moment is reset before any answer (one CI run saw a valid
 * request end in ECONNRESET so), and a reset the client caused is no answer of the gateway's.
 */
const dispatcher = new Agent({ keepAliveTimeout: 1_000 });

/** Sends one case over real HTTP; a failure to send at all (connection reset) is status 0. */
export async function sendCase(baseUrl: string, c: FuzzCase, credentials: Credentials): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json', ...c.headers };
  if (c.auth === 'tenant')
    headers.authorization = `Bearer ${c.operationId === 'authenticate' ? credentials.integrationToken : credentials.accessToken}`;
  else if (c.auth !== 'none') headers.authorization = c.auth.authorization;
  const body = c.body === undefined ? undefined : 'text' in c.body ? c.body.text : Buffer.from(c.body.base64, 'base64');
  const started = performance.now();
  try {
    const res = await fetch(baseUrl + c.url, {
      method: c.method,
      headers,
      body,
      signal: AbortSignal.timeout(30_000),
      dispatcher,
    });
    const text = await res.text();
    return {
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      text: text.slice(0, 2048),
      ms: performance.now() - started,
    };
  } catch (err) {
    return { status: 0, contentType: '', text: String((err as Error).cause ?? err), ms: performance.now() - started };
  }
}

/**
 * Runs `work` over `items` with at most `concurrency` in flight, in order of index, until every item
 * is done or `budgetMs` has passed (items not started by then are skipped). Resolves with how many ran.
 */
export async function runPool<T>(
  items: readonly T[],
  work: (item: T, index: number) => Promise<void>,
  options: { concurrency: number; budgetMs: number },
): Promise<number> {
  const deadline = Date.now() + options.budgetMs;
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length && Date.now() < deadline) {
      const index = next++;
      await work(items[index], index);
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return done;
}

/** Counts by operation and status, printed as one line per operation. */
export class Tally {
  private readonly counts = new Map<string, Map<number, number>>();

  add(operationId: string, status: number): void {
    const byStatus = this.counts.get(operationId) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.counts.set(operationId, byStatus);
  }

  operations(): string[] {
    return [...this.counts.keys()].sort();
  }

  total(): number {
    let n = 0;
    for (const byStatus of this.counts.values()) for (const c of byStatus.values()) n += c;
    return n;
  }

  report(): string {
    const lines = this.operations().map((op) => {
      const byStatus = this.counts.get(op)!;
      const total = [...byStatus.values()].reduce((a, b) => a + b, 0);
      const statuses = [...byStatus.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}:${n}`)
        .join(' ');
      return `  ${op.padEnd(20)} ${String(total).padStart(5)}  ${statuses}`;
    });
    return [`  ${'operation'.padEnd(20)} ${'sent'.padStart(5)}  status:count`, ...lines].join('\n');
  }
}

/** A case as a regression entry (e2e/support/fuzz/regressions.json), bodies over 4 KB cut. */
export function describeCase(c: GeneratedCase<string>): string {
  const body =
    c.body === undefined
      ? undefined
      : 'text' in c.body
        ? c.body.text.length > 4096
          ? `${c.body.text.slice(0, 4096)}... (${c.body.text.length} characters)`
          : c.body.text
        : `base64:${c.body.base64}`;
  return JSON.stringify({ ...c, body }, null, 1);
}

/** A case the run judged wrong, with what was wrong and the answer it got. */
export interface Failure<C extends GeneratedCase<string>> {
  index: number;
  problem: string;
  fuzzCase: C;
  answer: Answer;
}

/**
 * What to print for a run's failures: all of them go to a file in the temporary directory, the first
 * ten are shown. `label` names the run ("fuzz", "admin fuzz"), `seedVariable` how to replay it.
 */
export function failureReport<C extends GeneratedCase<string>>(
  failures: Array<Failure<C>>,
  run: { label: string; seedVariable: string; seed: number },
): string {
  const file = join(tmpdir(), `${run.label.replace(/ /g, '-')}-failures-${run.seed}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      failures.map((f) => ({ problem: f.problem, ...f.fuzzCase })),
      null,
      1,
    ),
  );
  const shown = failures
    .slice(0, 10)
    .map((f) => `#${f.index} ${f.problem}\n  answer: ${f.answer.text.slice(0, 300)}\n${describeCase(f.fuzzCase)}`);
  return `${run.label} failures with ${run.seedVariable}=${run.seed} (${failures.length}; all in ${file}):\n${shown.join('\n')}`;
}

/** What a run sent, how long it took, its answers by operation and status, and what it judged wrong. */
export interface RunResult<C extends GeneratedCase<string>> {
  sent: number;
  elapsed: number;
  tally: Tally;
  failures: Array<Failure<C>>;
}

/**
 * Sends `cases` as runPool does through `send`, which answers with the HTTP answer and what is wrong
 * with it, if anything; every answer is tallied, every problem kept.
 */
export async function runCases<C extends GeneratedCase<string>>(
  cases: readonly C[],
  send: (c: C) => Promise<{ answer: Answer; problem: string | undefined }>,
  options: { concurrency: number; budgetMs: number },
): Promise<RunResult<C>> {
  const tally = new Tally();
  const failures: Array<Failure<C>> = [];
  const started = Date.now();
  const sent = await runPool(
    cases,
    async (c, index) => {
      const { answer, problem } = await send(c);
      tally.add(c.operationId, answer.status);
      if (problem) failures.push({ index, problem, fuzzCase: c, answer });
    },
    options,
  );
  return { sent, elapsed: Date.now() - started, tally, failures };
}
