import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createTestCertificateAuthority, writeSandboxInterTls } from '@payments/inter-cobranca/test-certificates';
import { freePort } from '@payments/test-support/free-port';
import { setProviderAccount } from './admin-cli';

/*
 * The bank sandbox's PIX side as a test sees it: its controls on the main port and its PIX API (the
 * Central Bank's standard, bacen/pix-api 2.9.0) on the mutual TLS port. The types are our own, written
 * from the standard's document and the sandbox's documented controls, never from the adapter's or
 * the sandbox's code: a test's oracle is independent of the code under test.
 */

/** A standard-dialect integration, as a bank's portal issues one: POST /sandbox/pix/integrations. */
export interface PixIntegration {
  client_id: string;
  client_secret: string;
  cert_pem: string;
  key_pem: string;
  /** A PIX key registered to the integration's account (the cobv's `chave`). */
  pix_key: string;
  /** The PIX API root, e.g. https://127.0.0.1:3101/pix/v2. */
  pix_api_url: string;
  /** The OAuth2 token endpoint (client credentials). */
  token_url: string;
}

/** The standard's CobrancaStatus. */
export type CobvStatus = 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';

/** The standard's Devolucao (a refund of a received PIX). */
export interface Refund {
  id: string;
  rtrId?: string;
  valor: string;
  status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
  horario?: { solicitacao?: string; liquidacao?: string };
}

/** The standard's Pix: a PIX received, with how its value was made up when it paid a cobv. */
export interface ReceivedPix {
  endToEndId: string;
  txid?: string;
  valor: string;
  horario: string;
  chave?: string;
  infoPagador?: string;
  componentesValor?: Partial<Record<'original' | 'multa' | 'juros' | 'desconto' | 'abatimento', { valor: string }>>;
  devolucoes?: Refund[];
}

/** A modality and its value, as multa, juros and abatimento carry them (CobVValor). */
export interface Modality {
  modalidade: number;
  valorPerc: string;
}

/** The standard's CobVCompleta, as GET /cobv/{txid} answers it (only what tests read). */
export interface Cobv {
  txid: string;
  revisao?: number;
  status: CobvStatus;
  calendario: { criacao?: string; dataDeVencimento: string; validadeAposVencimento?: number };
  loc?: { id: number; location: string; tipoCob: 'cob' | 'cobv' };
  location?: string;
  devedor?: { cpf?: string; cnpj?: string; nome: string };
  recebedor?: { nome?: string; cidade?: string; cnpj?: string; cpf?: string };
  valor: {
    original: string;
    multa?: Modality;
    juros?: Modality;
    abatimento?: Modality;
    desconto?: {
      modalidade: number;
      descontoDataFixa?: Array<{ data: string; valorPerc: string }>;
      valorPerc?: string;
    };
  };
  chave: string;
  pixCopiaECola?: string;
  pix?: ReceivedPix[];
}

/** POST /sandbox/pix/refunds: a devolução made at the bank, as the tenant would in its bank app. */
export interface RefundMade {
  e2eid: string;
  id: string;
  rtr_id?: string;
  valor: string;
  status: string;
}

/** The faults in force (POST /sandbox/pix/faults, the same control as the Inter dialect's). */
export interface PixFaults {
  consult_not_found_ms?: number;
  rate_limit_per_minute?: number | null;
  drop_webhooks?: boolean;
}

/** The standard's modality numbers (CobVValor's domain tables). */
export const MULTA = { fixedAmount: 1, percentage: 2 } as const;
export const JUROS = { amountPerCalendarDay: 1, percentPerCalendarDay: 2, percentPerCalendarMonth: 3 } as const;
export const DESCONTO = { fixedAmountUntilDates: 1, percentageUntilDate: 2 } as const;

/**
 * Our cobvs' txids: 'rcv' and the receivable's id (a UUID, ours, not the ERP's) without dashes, lower
 * case: 35 characters, within the standard's [a-zA-Z0-9]{26,35}.
 */
export const TXID_PATTERN = /^rcv[0-9a-f]{32}$/;

/** A decimal string of the standard ("123.45") in cents. */
export function centsOf(valor: string | number | undefined): number {
  return Math.round(Number(valor) * 100);
}

export class PixBankControls {
  constructor(readonly sandboxUrl: string) {}

  async newIntegration(): Promise<PixIntegration> {
    return (await this.call('POST', '/sandbox/pix/integrations', undefined, 201)) as PixIntegration;
  }

  /** Every cobv of an integration (an Inter one too), as GET /cobv/{txid} answers each. */
  async charges(clientId: string): Promise<Cobv[]> {
    const found = (await this.call('GET', `/sandbox/pix/charges?client_id=${encodeURIComponent(clientId)}`)) as {
      charges: Cobv[];
    };
    return found.charges;
  }

  /**
   * Pays a cobv by PIX at the bank: `amount` in reais (default: what is due that day), `paidOn` the
   * Brasília date it is paid as of (default today). Status and body as answered.
   */
  async pay(
    txid: string,
    options: { amount?: number; paidOn?: string } = {},
  ): Promise<{ status: number; body: unknown }> {
    return this.send('POST', `/sandbox/charges/${encodeURIComponent(txid)}/pay`, {
      method: 'pix',
      ...(options.amount === undefined ? {} : { amount: options.amount }),
      ...(options.paidOn === undefined ? {} : { paid_on: options.paidOn }),
    });
  }

  /** A devolução of the payment of `txid`, made at the bank; `amount` in reais, the whole payment when absent. */
  async refund(txid: string, amount?: number): Promise<RefundMade> {
    return (await this.call(
      'POST',
      '/sandbox/pix/refunds',
      amount === undefined ? { txid } : { txid, amount },
      201,
    )) as RefundMade;
  }

  async setFaults(faults: PixFaults): Promise<PixFaults> {
    return (await this.call('POST', '/sandbox/pix/faults', faults)) as PixFaults;
  }

  /** Tells the bank who holds an integration's account (the name its BR Codes carry). */
  async setHolder(clientId: string, holder: { name: string; tax_id: string; city: string; pix_key: string }) {
    return this.call('PUT', `/sandbox/inter/clients/${encodeURIComponent(clientId)}/holder`, holder);
  }

  /** Boletos of an Inter integration (GET /sandbox/inter/charges), only what tests read. */
  async boletos(clientId: string): Promise<Array<{ cobranca: { seuNumero: string; valorNominal: number | string } }>> {
    const found = (await this.call('GET', `/sandbox/inter/charges?client_id=${encodeURIComponent(clientId)}`)) as {
      charges: Array<{ cobranca: { seuNumero: string; valorNominal: number | string } }>;
    };
    return found.charges;
  }

  async send(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${this.sandboxUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      // not JSON: kept as text, for the failure's message
    }
    return { status: res.status, body: parsed };
  }

  private async call(method: string, path: string, body?: unknown, expected?: number): Promise<unknown> {
    const res = await this.send(method, path, body);
    if (expected !== undefined ? res.status !== expected : res.status >= 300)
      throw new Error(`sandbox ${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

/**
 * The bank's PIX API as the tenant's other tools would call it with the integration: OAuth2 client
 * credentials (HTTP Basic) and mutual TLS, on the standard's paths. For reading what the bank holds.
 */
export class PixApi {
  private readonly agent: Agent;
  private token = '';

  constructor(
    private readonly integration: PixIntegration,
    caPem: string,
  ) {
    this.agent = new Agent({ connect: { cert: integration.cert_pem, key: integration.key_pem, ca: caPem } });
  }

  /** GET /cobv/{txid}: the status and body as answered. */
  async cobv(txid: string): Promise<{ status: number; body: Cobv }> {
    return (await this.get(`/cobv/${encodeURIComponent(txid)}`)) as { status: number; body: Cobv };
  }

  /** GET /webhook/{chave}: the status and body as answered. */
  async webhook(chave: string): Promise<{ status: number; body: { webhookUrl?: string } }> {
    return (await this.get(`/webhook/${encodeURIComponent(chave)}`)) as {
      status: number;
      body: { webhookUrl?: string };
    };
  }

  /** GET /pix?inicio&fim: every page of the PIX received in the window. */
  async received(inicio: Date, fim: Date): Promise<ReceivedPix[]> {
    const all: ReceivedPix[] = [];
    for (let page = 0; ; page += 1) {
      const query = new URLSearchParams({
        inicio: inicio.toISOString(),
        fim: fim.toISOString(),
        'paginacao.paginaAtual': String(page),
      });
      const { status, body } = (await this.get(`/pix?${query}`)) as {
        status: number;
        body: { pix: ReceivedPix[]; parametros: { paginacao: { paginaAtual: number; quantidadeDePaginas: number } } };
      };
      if (status !== 200) throw new Error(`GET /pix: ${status} ${JSON.stringify(body)}`);
      all.push(...body.pix);
      if (page + 1 >= body.parametros.paginacao.quantidadeDePaginas) return all;
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async get(path: string): Promise<{ status: number; body: unknown }> {
    if (!this.token) await this.authenticate();
    const res = await request(`${this.integration.pix_api_url}${path}`, {
      dispatcher: this.agent,
      headers: { authorization: `Bearer ${this.token}` },
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? (JSON.parse(text) as unknown) : undefined };
  }

  private async authenticate(): Promise<void> {
    const basic = Buffer.from(`${this.integration.client_id}:${this.integration.client_secret}`).toString('base64');
    const res = await request(this.integration.token_url, {
      method: 'POST',
      dispatcher: this.agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        scope: 'cobv.read pix.read webhook.read',
      }).toString(),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`PIX API token: ${res.statusCode} ${text}`);
    this.token = (JSON.parse(text) as { access_token: string }).access_token;
  }
}

/** The account holder a test registers a `pix` account for. */
export interface Beneficiary {
  name: string;
  taxId: string;
}

/**
 * `tenant account --provider pix` through the admin CLI with an integration's credentials, as an
 * operator sets it (certificate and key written to `dir`, the secret from stdin).
 */
export async function setPixAccount(
  databaseUrl: string,
  dir: string,
  tenantId: string,
  integration: PixIntegration,
  beneficiary: Beneficiary,
): Promise<unknown> {
  const files = { cert: join(dir, `${randomUUID()}.crt`), key: join(dir, `${randomUUID()}.key`) };
  writeFileSync(files.cert, integration.cert_pem);
  writeFileSync(files.key, integration.key_pem, { mode: 0o600 });
  return setProviderAccount(
    databaseUrl,
    [
      ...['--tenant', tenantId, '--provider', 'pix'],
      ...['--pix-api-url', integration.pix_api_url, '--token-url', integration.token_url],
      ...['--client-id', integration.client_id, '--client-secret-file', '-'],
      ...['--cert-file', files.cert, '--key-file', files.key, '--pix-key', integration.pix_key],
      ...['--beneficiary-name', beneficiary.name, '--beneficiary-tax-id', beneficiary.taxId],
    ],
    integration.client_secret,
  );
}

/** The sandbox's mutual TLS listener (Inter dialect and PIX API) with a CA of the test's own. */
export interface PixSandboxTls {
  /** Environment for startSystem: the listener's port and TLS files, the CA key (to sign integrations), trust. */
  env: Record<string, string>;
  /** The CA the listener's and the integrations' certificates chain to. */
  caPem: string;
  /** The Inter dialect's base URL on that listener (an `inter` account's --base-url). */
  interBaseUrl: string;
}

/**
 * A development CA written to `dir`, and the environment that makes the sandbox serve its mutual TLS
 * port with it and sign integrations, and receivables-svc trust it.
 */
export async function pixSandboxTls(dir: string): Promise<PixSandboxTls> {
  const port = await freePort();
  const ca = createTestCertificateAuthority('PIX e2e CA');
  const tls = writeSandboxInterTls(ca, dir, { withCaKey: true });
  const interBaseUrl = `https://127.0.0.1:${port}/inter`;
  return {
    caPem: ca.certPem,
    interBaseUrl,
    env: {
      BANK_SANDBOX_INTER_PORT: String(port),
      ...tls,
      INTER_BASE_URL: interBaseUrl,
      INTER_TRUSTED_CA_FILE: tls.BANK_SANDBOX_INTER_TLS_CA_FILE,
    },
  };
}
