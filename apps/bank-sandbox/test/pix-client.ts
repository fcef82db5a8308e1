import { Agent, request } from 'undici';
import { encodeBody, ScriptedReceiver } from './harness';

/**
 * A client of the sandbox's PIX API over mutual TLS, and the shapes of the standard's answers as the
 * tests read them: written from the Central Bank's document (bacen/pix-api), not from any adapter.
 */

/** POST /sandbox/pix/integrations. */
export interface PixIntegration {
  client_id: string;
  client_secret: string;
  cert_pem: string;
  key_pem: string;
  pix_key: string;
  pix_api_url: string;
  token_url: string;
}

/** Devolucao. */
export interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  horario: { solicitacao?: string; liquidacao?: string };
  status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
}

/** Pix (a PIX received). */
export interface Pix {
  endToEndId: string;
  txid?: string;
  valor: string;
  componentesValor?: Record<string, { valor: string }>;
  chave?: string;
  horario: string;
  devolucoes?: Devolucao[];
}

/** CobVCompleta. */
export interface CobV {
  calendario: { criacao: string; dataDeVencimento: string; validadeAposVencimento: number };
  txid: string;
  revisao: number;
  loc: { id: number; location: string; tipoCob: 'cobv' };
  location: string;
  status: 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';
  valor: { original: string };
  chave: string;
  pixCopiaECola: string;
  pix?: Pix[];
}

/** Problema (RFC 7807). */
export interface Problema {
  type: string;
  title: string;
  status: number;
  detail?: string;
  violacoes?: Array<{ razao?: string; propriedade?: string; valor?: string }>;
}

export interface Answer<T = unknown> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

type Method = 'GET' | 'PUT' | 'PATCH' | 'DELETE' | 'POST';

export class PixTestClient {
  readonly agent: Agent;
  bearer: string | null = null;

  constructor(
    /** The PIX API root, e.g. https://127.0.0.1:<port>/pix/v2. */
    readonly root: string,
    caPem: string,
    identity: { cert_pem: string; key_pem: string },
  ) {
    this.agent = new Agent({ connect: { ca: caPem, cert: identity.cert_pem, key: identity.key_pem } });
  }

  async call<T = unknown>(
    method: Method,
    path: string,
    options: {
      json?: unknown;
      headers?: Record<string, string>;
      url?: string;
      form?: Record<string, string>;
      signal?: AbortSignal;
    } = {},
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.bearer && !headers.authorization) headers.authorization = `Bearer ${this.bearer}`;
    const body = encodeBody(headers, options);
    const response = await request(options.url ?? `${this.root}${path}`, {
      method,
      headers,
      body,
      dispatcher: this.agent,
      signal: options.signal,
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
  }

  /** Client credentials at `tokenUrl` (HTTP Basic); keeps the token for the next calls. */
  async login(
    tokenUrl: string,
    clientId: string,
    secret: string,
    scope?: string,
  ): Promise<Answer<{ access_token: string; scope: string }>> {
    const basic = Buffer.from(`${clientId}:${secret}`).toString('base64');
    const form: Record<string, string> = { grant_type: 'client_credentials', ...(scope ? { scope } : {}) };
    const answer = await this.call<{ access_token: string; scope: string }>('POST', '', {
      url: tokenUrl,
      form,
      headers: { authorization: `Basic ${basic}` },
    });
    if (answer.status === 200) this.bearer = answer.body.access_token;
    return answer;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Where the bank's PIX notices land: each POST with its path and body; answers the statuses scripted, then 200. */
export class PixNoticeReceiver extends ScriptedReceiver<{ pix: Pix[] }> {
  constructor() {
    super('/provider/webhooks/pix/account-1');
  }

  /** The notice items about one txid, in order. */
  itemsFor(txid: string): Pix[] {
    return this.received.flatMap((r) => r.body.pix).filter((item) => item.txid === txid);
  }
}

/** A BR Code's fields: id -> value (TLV with two-digit lengths), as a payer's app reads them. */
export function parseTlv(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  let at = 0;
  while (at < text.length) {
    const id = text.slice(at, at + 2);
    const length = Number(text.slice(at + 2, at + 4));
    if (!/^\d{2}$/.test(id) || !Number.isInteger(length)) throw new Error(`bad TLV at ${at}: ${text.slice(at)}`);
    fields.set(id, text.slice(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return fields;
}

/** CRC16-CCITT-FALSE written here from its definition (poly 0x1021, init 0xFFFF, no reflection, no xor-out). */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'ascii')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
