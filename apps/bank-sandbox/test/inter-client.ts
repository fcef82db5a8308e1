import { Agent, request } from 'undici';
import { encodeBody, ScriptedReceiver } from './harness';

/** An integration as POST /sandbox/inter/integrations hands it out (the documented control). */
export interface TestIntegration {
  client_id: string;
  client_secret: string;
  cert_pem: string;
  key_pem: string;
  account: string;
  pix_key: string;
}

export interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** A client of the Inter dialect over mutual TLS with an integration's certificate, as our adapter would be. */
export class InterTestClient {
  readonly agent: Agent;
  private bearer: string | null = null;

  constructor(
    readonly baseUrl: string,
    caPem: string,
    readonly integration: TestIntegration,
  ) {
    this.agent = new Agent({ connect: { ca: caPem, cert: integration.cert_pem, key: integration.key_pem } });
  }

  async call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    options: { token?: string | null; json?: unknown; form?: Record<string, string>; account?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    const token = options.token === undefined ? this.bearer : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (options.account !== undefined) headers['x-conta-corrente'] = options.account;
    const body = encodeBody(headers, options);
    const response = await request(`${this.baseUrl}${path}`, { method, headers, body, dispatcher: this.agent });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      body: text ? (JSON.parse(text) as unknown) : undefined,
      headers: response.headers,
    };
  }

  /** Asks a token and keeps it for the next calls. */
  async login(scope = 'boleto-cobranca.read boleto-cobranca.write'): Promise<Answer> {
    const answer = await this.call('POST', '/oauth/v2/token', {
      token: null,
      form: {
        client_id: this.integration.client_id,
        client_secret: this.integration.client_secret,
        grant_type: 'client_credentials',
        scope,
      },
    });
    if (answer.status === 200) this.bearer = (answer.body as { access_token: string }).access_token;
    return answer;
  }

  async create(json: unknown): Promise<Answer> {
    return this.call('POST', '/cobranca/v3/cobrancas', { json });
  }

  async consult(codigo: string): Promise<Answer> {
    return this.call('GET', `/cobranca/v3/cobrancas/${codigo}`);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Where the bank's notices land: records each POST and answers the statuses scripted, then 200. */
export class NoticeReceiver extends ScriptedReceiver<unknown> {
  constructor() {
    super('/inter/notices');
  }

  /** The notice items received about one charge, in order. */
  itemsFor(codigo: string): Array<Record<string, unknown>> {
    return this.received
      .flatMap((r) => r.body as Array<Record<string, unknown>>)
      .filter((item) => item.codigoSolicitacao === codigo);
  }
}
