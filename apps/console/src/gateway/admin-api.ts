import { ADMIN_API_PREFIX, OPERATOR_CREDENTIAL_PREFIX } from '@payments/contracts';
import { asProblem, gatewayFetch, GatewayError } from './problem';

type Query = Record<string, string | number | undefined>;

/**
 * The gateway's admin API (ADMIN_PORT), called with the operator's own credential on every request,
 * so a revoked credential stops at once. Answers are typed by the caller with the contract's Static<>
 * types (libs/contracts/src/admin.ts), where every admin shape is defined once.
 */
export class AdminApi {
  private readonly fetch = gatewayFetch();

  constructor(private readonly baseUrl: string) {}

  /** `GET`/`POST`/`PUT` on a path under /admin/v1 (e.g. `/tenants`); a refusal throws GatewayError. */
  async request<T>(
    credential: string,
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    options: { query?: Query; body?: unknown } = {},
  ): Promise<T> {
    const url = new URL(`${this.baseUrl}${ADMIN_API_PREFIX}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {}))
      if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { authorization: `Bearer ${credential}`, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await this.fetch(
      new Request(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      }),
    );
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok)
      throw new GatewayError(`${method} ${ADMIN_API_PREFIX}${path}`, response.status, asProblem(body, response.status));
    return body as T;
  }

  /**
   * Whether the admin API takes this credential: the cheapest authenticated read (one audit row).
   * Throws GatewayError 401 when it does not.
   */
  async check(credential: string): Promise<void> {
    await this.request(credential, 'GET', '/audit', { query: { limit: 1 } });
  }
}

/** Operator credentials look like `opk_...`; anything else is refused before calling the gateway. */
export function looksLikeOperatorCredential(text: string): boolean {
  return text.startsWith(OPERATOR_CREDENTIAL_PREFIX) && /^[A-Za-z0-9_-]{8,200}$/.test(text);
}
