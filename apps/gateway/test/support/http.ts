/** What a call answered, read once: the body as text and, where it parses, as JSON. */
export interface Answer {
  status: number;
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions read any field
  json: any;
  text: string;
}

/** One HTTP call with an optional bearer credential and JSON body. */
export async function call(base: string, method: string, path: string, auth?: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = `Bearer ${auth}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', json, text };
}
