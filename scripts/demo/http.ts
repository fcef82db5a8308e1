/** An answer whose status was one of those expected. */
export interface JsonAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Statuses that count as success; anything else throws with the problem's detail. */
  expect: number[];
}

/** One HTTP exchange with JSON in and out; a network failure or an unexpected status throws a readable Error. */
export async function requestJson<T>(spec: RequestSpec): Promise<JsonAnswer<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  const res = await send(spec, headers);
  const text = await res.text();
  if (!spec.expect.includes(res.status))
    throw new Error(`${spec.method} ${spec.url} answered ${res.status}: ${describeProblem(text)}`);
  return { status: res.status, headers: res.headers, body: parseJson<T>(text, spec.url) };
}

async function send(spec: RequestSpec, headers: Record<string, string>): Promise<Response> {
  try {
    return await fetch(spec.url, {
      method: spec.method,
      headers,
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
    });
  } catch (err) {
    throw new Error(`${spec.method} ${spec.url} failed: ${networkCause(err)}`, { cause: err });
  }
}

/** The most telling part of a fetch failure (undici hides ECONNREFUSED in `cause`). */
export function networkCause(err: unknown): string {
  if (err instanceof Error && err.cause instanceof Error) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

function parseJson<T>(text: string, url: string): T {
  try {
    return (text ? JSON.parse(text) : undefined) as T;
  } catch {
    throw new Error(`${url} did not answer JSON: ${text.slice(0, 200)}`);
  }
}

interface Problem {
  title?: string;
  detail?: string;
  errors?: Array<{ path: string; message: string }>;
}

function describeProblem(text: string): string {
  try {
    const p = JSON.parse(text) as Problem;
    const fields = p.errors?.map((e) => `${e.path} ${e.message}`).join('; ');
    return [p.title, p.detail, fields].filter(Boolean).join(': ') || text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}
