import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { setProviderAccount } from './admin-cli';

/*
 * The bank sandbox's Inter dialect as a test sees it: its controls on the sandbox's main port
 * ("The sandbox behaves like the bank"), read with types of our own, written from the
 * documented controls and Inter's reference, never the adapter's schemas (a test's oracle is
 * independent of the code under test).
 */

/** An integration as Inter's internet banking issues one: POST /sandbox/inter/integrations. */
export interface InterIntegration {
  client_id: string;
  client_secret: string;
  cert_pem: string;
  key_pem: string;
  /** Its checking account number (x-conta-corrente). */
  account: string;
  pix_key: string;
}

/** The faults in force: POST /sandbox/inter/faults. */
export interface InterFaults {
  consult_not_found_ms?: number;
  rate_limit_per_minute?: number;
  drop_webhooks?: boolean;
  no_pix_key?: boolean;
}

/** A boleto at the bank, in the shape of Inter's consult answer (only what tests read). */
export interface BankCharge {
  cobranca: {
    codigoSolicitacao: string;
    seuNumero: string;
    situacao: string;
    valorNominal: number | string;
    dataVencimento: string;
    valorTotalRecebido?: number | string;
  };
  boleto?: { nossoNumero: string };
  pix?: { txid: string };
}

/** GET /sandbox/inter/calls: the bank's count of an integration's calls, per endpoint. */
export interface BankCalls {
  endpoints: Record<string, { total: number; max_per_minute: number; refused: number }>;
}

/** Situations in which a boleto can still be paid, or become payable (Inter's SituacaoCobranca). */
export const LIVE_SITUATIONS = ['EM_PROCESSAMENTO', 'A_RECEBER', 'ATRASADO', 'PROTESTO'];

/** A value in reais as Inter writes it (number or decimal string), in cents. */
export function cents(value: number | string | undefined): number {
  return Math.round(Number(value) * 100);
}

export class InterBankControls {
  constructor(readonly sandboxUrl: string) {}

  async newIntegration(): Promise<InterIntegration> {
    return (await this.call('POST', '/sandbox/inter/integrations', undefined, 201)) as InterIntegration;
  }

  async setFaults(faults: InterFaults): Promise<InterFaults> {
    return (await this.call('POST', '/sandbox/inter/faults', faults)) as InterFaults;
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/sandbox/inter/faults');
  }

  /** The next created charge ends in FALHA_EMISSAO (the bank failed to issue it). */
  async failNextIssue(): Promise<void> {
    await this.call('POST', '/sandbox/inter/behaviour', { fail_issue_once: true });
  }

  /** Every boleto of an integration, as the bank holds it. */
  async charges(clientId: string): Promise<BankCharge[]> {
    const found = (await this.call('GET', `/sandbox/inter/charges?client_id=${encodeURIComponent(clientId)}`)) as {
      charges: BankCharge[];
    };
    return found.charges;
  }

  /** The calls the bank counted for an integration, per endpoint: in all, the most within a minute, refused with 429. */
  async calls(clientId: string): Promise<BankCalls> {
    return (await this.call('GET', `/sandbox/inter/calls?client_id=${encodeURIComponent(clientId)}`)) as BankCalls;
  }

  /** Pays a charge at the bank (by codigoSolicitacao, our_number or txid); `amount` in reais, the amount due when absent. */
  async pay(id: string, method: 'boleto' | 'pix', amount?: number): Promise<BankCharge> {
    return (await this.call(
      'POST',
      `/sandbox/charges/${encodeURIComponent(id)}/pay`,
      amount === undefined ? { method } : { method, amount },
    )) as BankCharge;
  }

  private async call(method: string, path: string, body?: unknown, expected?: number): Promise<unknown> {
    const res = await fetch(`${this.sandboxUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (expected !== undefined ? res.status !== expected : res.status >= 300)
      throw new Error(`sandbox ${method} ${path}: ${res.status} ${text}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }
}

/** An integration's certificate and key as files in `dir`, the key readable by its owner only. */
export function writeIntegrationFiles(dir: string, integration: InterIntegration): { cert: string; key: string } {
  const files = { cert: join(dir, `${randomUUID()}.crt`), key: join(dir, `${randomUUID()}.key`) };
  writeFileSync(files.cert, integration.cert_pem);
  writeFileSync(files.key, integration.key_pem, { mode: 0o600 });
  return files;
}

/**
 * The flags of `tenant account --provider inter` for an integration's credentials, as an operator
 * gives them: its certificate and key as files, its secret read from `secretFile` (`-`: stdin).
 */
export function interAccountFlags(
  tenantId: string,
  integration: InterIntegration,
  files: { cert: string; key: string },
  secretFile: string,
): string[] {
  return [
    ...['--tenant', tenantId, '--provider', 'inter'],
    ...['--beneficiary-name', 'Escola Caos Controlado', '--beneficiary-tax-id', '45.723.174/0001-10'],
    ...['--account', integration.account, '--pix-key', integration.pix_key],
    ...['--client-id', integration.client_id, '--client-secret-file', secretFile],
    ...['--cert-file', files.cert, '--key-file', files.key],
  ];
}

/**
 * `tenant account --provider inter` through the admin CLI with an integration's credentials, as an
 * operator sets it (files written to `dir`, the secret from stdin).
 */
export async function setInterAccount(
  databaseUrl: string,
  dir: string,
  tenantId: string,
  integration: InterIntegration,
  baseUrl: string,
): Promise<unknown> {
  const files = writeIntegrationFiles(dir, integration);
  return setProviderAccount(
    databaseUrl,
    [...interAccountFlags(tenantId, integration, files, '-'), '--base-url', baseUrl],
    integration.client_secret,
  );
}

/**
 * Another client of the same Inter account (the tenant's ERP, an accountant's tool) calling Inter's
 * API with the integration's certificate and token: its calls spend the account's per-minute limits
 * at the bank, which our service cannot see, so our calls meet 429s and their Retry-After.
 */
export class InterNeighbour {
  private readonly agent: Agent;
  private token = '';

  constructor(
    private readonly baseUrl: string,
    private readonly integration: InterIntegration,
    caPem: string,
  ) {
    this.agent = new Agent({ connect: { cert: integration.cert_pem, key: integration.key_pem, ca: caPem } });
  }

  /**
   * Lists charges (GET /cobranca/v3/cobrancas) one call after another, keeping the account's list
   * budget spent, until `enough` says so (asked with the number of 429s this neighbour got) or `maxMs`
   * has passed; after a 429 of its own it waits a second before the next call. The statuses the bank
   * answered.
   */
  async listUntil(
    enough: (ownRefused: number) => Promise<boolean>,
    from: string,
    to: string,
    maxMs: number,
  ): Promise<number[]> {
    if (!this.token) await this.authenticate();
    const statuses: number[] = [];
    const deadline = Date.now() + maxMs;
    const refused = () => statuses.filter((s) => s === 429).length;
    while (Date.now() < deadline && !(await enough(refused()))) {
      const query = new URLSearchParams({ dataInicial: from, dataFinal: to });
      const res = await request(`${this.baseUrl}/cobranca/v3/cobrancas?${query}`, {
        dispatcher: this.agent,
        headers: { authorization: `Bearer ${this.token}`, 'x-conta-corrente': this.integration.account },
      });
      await res.body.dump();
      statuses.push(res.statusCode);
      if (res.statusCode === 429) await new Promise((r) => setTimeout(r, 1_000));
    }
    return statuses;
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async authenticate(): Promise<void> {
    const res = await request(`${this.baseUrl}/oauth/v2/token`, {
      method: 'POST',
      dispatcher: this.agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: this.integration.client_id,
        client_secret: this.integration.client_secret,
        grant_type: 'client_credentials',
        scope: 'boleto-cobranca.read',
      }).toString(),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`token for the neighbour: ${res.statusCode} ${text}`);
    this.token = (JSON.parse(text) as { access_token: string }).access_token;
  }
}
