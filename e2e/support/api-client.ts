import { randomUUID } from 'node:crypto';

export interface ApiResponse<T = unknown> {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
  json: T;
}

/** A thin fetch wrapper for tests: real HTTP, JSON in and out, the raw answer kept for assertions. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  withToken(token: string): ApiClient {
    return new ApiClient(this.baseUrl, token);
  }

  post<T = unknown>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    return this.send<T>('POST', path, body, headers);
  }

  put<T = unknown>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    return this.send<T>('PUT', path, body, headers);
  }

  /** A mutating call with a fresh Idempotency-Key unless one is given. */
  postIdempotent<T = unknown>(path: string, body: unknown, key = randomUUID()): Promise<ApiResponse<T>> {
    return this.post<T>(path, body, { 'idempotency-key': key });
  }

  async send<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    const all: Record<string, string> = { accept: 'application/json', ...headers };
    if (this.token && !('authorization' in all)) all.authorization = `Bearer ${this.token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      if (!('content-type' in all)) all['content-type'] = 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers: all, body: payload });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, statusText: res.statusText, headers: res.headers, text, json: json as T };
  }
}
