import {
  ChargeList,
  ChargeView,
  CreateChargeResponse,
  INTER_PATHS,
  PdfResponse,
  seuNumeroFor,
  type ChargeView as ChargeViewType,
  type CreateChargeRequest,
} from '@payments/inter-cobranca';
import type { OpenedCredentials } from '../credentials';
import {
  ProviderUnavailableError,
  type BatchRegistrationOutcome,
  type CancellationOutcome,
  type ChargeRequest,
  type PaymentProvider,
  type ProviderAccount,
  type ProviderChargeState,
  type SweepResult,
  type SweepWindow,
} from '../../domain/ports';
import { InterAccountClient, InterHttpError, InterNetworkError, describeError } from './client';
import { chargeState, registrationOutcome, toCreateRequest } from './mapping';
import { sweepInter } from './sweep';

export { parseInterWebhook, InvalidInterWebhookError, type InterNotice } from './webhook';

/** What the Inter adapter needs; one instance serves every `inter` account. */
export interface InterProviderOptions {
  /** The credentials for a call on an account's behalf (the newest of its bank account), opened. */
  credentials(account: ProviderAccount): Promise<OpenedCredentials>;
  /** API root when the account sets none (INTER_BASE_URL). */
  defaultBaseUrl: string;
  /** Deadline of one HTTP exchange (connect to the end of the answer). */
  timeoutMs: number;
  /** Where Inter is told to send an account's payment webhooks. */
  webhookUrl(accountId: string): string;
  /** A CA to trust besides the public ones (the bank sandbox's test CA); unset in production. */
  trustedCaPem?: string;
  /** Consults after a create before giving up for this attempt (a charge is issued asynchronously). Default [0, 150, 400, 1000] ms. */
  issuePollMs?: number[];
  /** numDiasAgenda: days after the due date a charge stays payable before Inter cancels it (0-60). Default 60. */
  daysPayableAfterDue?: number;
  /** Charges registered at once for one account (Inter has no batch endpoint). Default 4. */
  concurrency?: number;
}

const DEFAULT_POLL_MS = [0, 150, 400, 1_000];
const CANCEL_REASON_MAX = 50;

interface AccountState {
  client: InterAccountClient;
  baseUrl: string;
  /** The credentials version the client was made from. */
  versionId: string;
  /** PUT webhook done (or under way) for this bank account. */
  webhook: Promise<void> | null;
  /** Our ids whose create went unanswered: look them up by seuNumero before creating again. */
  uncertain: Set<string>;
}

/**
 * Banco Inter Cobrança v3 (boleto with PIX). Per account: an undici Agent with its client
 * certificate (mutual TLS) and a cached OAuth2 token; the payment webhook URL registered once before the
 * first issue. Creation is asynchronous at Inter: a create is followed by a few consults, and a charge not
 * issued yet is 'unavailable' with its codigoSolicitacao, so the next attempt consults instead of creating.
 * A create without an answer is looked up by seuNumero (15 digits derived from our id) before anything
 * is created again, so a retry never makes a second boleto.
 *
 * Errors: 400, 404, 422 refuse a charge (rejected, code inter_<status>); 401 (after one token refresh),
 * 403, 408, 409, 429, 5xx, no answer or an answer off the contract are ProviderUnavailableError or
 * 'unavailable' (retried later).
 */
export class InterProvider implements PaymentProvider {
  private readonly accounts = new Map<string, AccountState>();

  constructor(private readonly options: InterProviderOptions) {}

  async registerMany(account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    const state = await this.stateOf(account);
    await this.ensureWebhook(account, state);
    return mapLimit(requests, this.options.concurrency ?? 4, (request) => this.registerOne(account, state, request));
  }

  async cancel(account: ProviderAccount, chargeId: string, reason: string): Promise<CancellationOutcome> {
    const { client } = await this.stateOf(account);
    const motivo = (reason.trim() || 'cancelada pelo beneficiário').slice(0, CANCEL_REASON_MAX);
    try {
      await client.call({
        method: 'POST',
        path: INTER_PATHS.cancel(chargeId),
        json: { motivoCancelamento: motivo },
        what: 'cancel',
      });
      return 'cancelled';
    } catch (err) {
      if (!(err instanceof InterHttpError) || !(err.isRefusal || err.status === 409)) throw err;
    }
    // Refused: the charge is no longer open, or unknown. What it is now decides; a refusal of an open
    // (or unknown) charge is permanent (DESIGN §7), not an outage to wait out.
    const state = await this.consult(account, chargeId);
    if (state.kind === 'cancelled') return 'cancelled';
    return state.kind === 'paid' ? 'not_open' : 'refused';
  }

  async consult(account: ProviderAccount, chargeId: string): Promise<ProviderChargeState> {
    try {
      return chargeState(await this.view((await this.stateOf(account)).client, chargeId));
    } catch (err) {
      if (err instanceof InterHttpError && err.status === 404) return { kind: 'unknown' };
      throw err;
    }
  }

  async slipPdf(account: ProviderAccount, chargeId: string): Promise<Buffer> {
    const { client } = await this.stateOf(account);
    const answer = await client.callFor<PdfResponse>(
      { method: 'GET', path: INTER_PATHS.pdf(chargeId), what: 'pdf' },
      PdfResponse,
    );
    const pdf = Buffer.from(answer.pdf, 'base64');
    if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-')
      throw new ProviderUnavailableError(`inter pdf of ${chargeId}: the answer is not a PDF`);
    return pdf;
  }

  /** Reconciliation: Inter's lists and callback history for the window (a few paced calls; see sweep.ts). */
  async sweep(account: ProviderAccount, window: SweepWindow): Promise<SweepResult> {
    return sweepInter((await this.stateOf(account)).client, window);
  }

  /** Releases the accounts' connections (service stop, tests). */
  async close(): Promise<void> {
    const states = [...this.accounts.values()];
    this.accounts.clear();
    await Promise.all(states.map((s) => s.client.close()));
  }

  /** Token requests made so far for an account's current connection (tests, metrics). */
  tokenRequestsOf(account: ProviderAccount): number {
    return this.accounts.get(bankAccountOf(account))?.client.tokenRequests ?? 0;
  }

  private async registerOne(
    account: ProviderAccount,
    state: AccountState,
    request: ChargeRequest,
  ): Promise<BatchRegistrationOutcome> {
    try {
      if (request.providerChargeId) return await this.issued(state, request, request.providerChargeId, [0]);
      const create = toCreateRequest(request, this.options.daysPayableAfterDue ?? 60);
      if (!create.ok)
        return {
          kind: 'rejected',
          code: 'invalid_request',
          message: `not a charge Inter accepts: ${create.violations.map((v) => `${v.path} ${v.message}`).join('; ')}`,
        };
      // A later attempt (a redelivered job, maybe after a restart) may find the charge an earlier one created.
      if (state.uncertain.has(request.idempotencyKey) || request.attempt > 1) {
        const earlier = await this.lookUp(state, create.body);
        state.uncertain.delete(request.idempotencyKey);
        if (earlier) return await this.issued(state, request, earlier, [0]);
      }
      const codigo = await this.create(state, request, create.body);
      if (typeof codigo !== 'string') return codigo;
      return await this.issued(state, request, codigo, this.options.issuePollMs ?? DEFAULT_POLL_MS);
    } catch (err) {
      if (err instanceof InterHttpError && err.isRefusal)
        return { kind: 'rejected', code: `inter_${err.status}`, message: err.message };
      if (err instanceof ProviderUnavailableError) return { kind: 'unavailable', reason: err.message };
      throw err;
    }
  }

  /**
   * POSTs the create; a create without an answer may have been stored all the same, so it is looked up
   * by seuNumero at once (and, if that fails too, before the next attempt creates anything).
   */
  private async create(
    state: AccountState,
    request: ChargeRequest,
    body: CreateChargeRequest,
  ): Promise<string | BatchRegistrationOutcome> {
    try {
      const created = await state.client.callFor<CreateChargeResponse>(
        { method: 'POST', path: INTER_PATHS.charges, json: body, what: 'create' },
        CreateChargeResponse,
      );
      return created.codigoSolicitacao;
    } catch (err) {
      if (!(err instanceof InterNetworkError)) throw err;
      state.uncertain.add(request.idempotencyKey);
      let found: string | null;
      try {
        found = await this.lookUp(state, body);
      } catch {
        return { kind: 'unavailable', reason: `${err.message}; not found by seuNumero yet` };
      }
      state.uncertain.delete(request.idempotencyKey);
      if (found) return found;
      return { kind: 'unavailable', reason: `${err.message}; Inter has no charge with its seuNumero` };
    }
  }

  /** The codigoSolicitacao of the charge created for this request body, if Inter has one. */
  private async lookUp(state: AccountState, body: CreateChargeRequest): Promise<string | null> {
    const list = await state.client.callFor<ChargeList>(
      {
        method: 'GET',
        path: INTER_PATHS.charges,
        query: {
          dataInicial: body.dataVencimento,
          dataFinal: body.dataVencimento,
          filtrarDataPor: 'VENCIMENTO',
          seuNumero: body.seuNumero,
        },
        what: 'list by seuNumero',
      },
      ChargeList,
    );
    const same = list.cobrancas.filter(
      (c) =>
        c.cobranca.seuNumero === body.seuNumero &&
        Math.round(Number(c.cobranca.valorNominal) * 100) === Math.round(body.valorNominal * 100),
    );
    // A charge that failed to issue or was cancelled is history: prefer one that is (or may become) payable.
    const live = same.find((c) => !['FALHA_EMISSAO', 'CANCELADO', 'EXPIRADO'].includes(c.cobranca.situacao));
    return (live ?? same[0])?.cobranca.codigoSolicitacao ?? null;
  }

  /** Consults a created charge (after each delay of `pollMs`) until it is issued or the delays run out. */
  private async issued(
    state: AccountState,
    request: ChargeRequest,
    codigo: string,
    pollMs: number[],
  ): Promise<BatchRegistrationOutcome> {
    let outcome: BatchRegistrationOutcome = { kind: 'unavailable', reason: 'not consulted', chargeId: codigo };
    for (const delay of pollMs) {
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        const view = await this.view(state.client, codigo);
        outcome = registrationOutcome(view, request.kind, `${state.baseUrl}${INTER_PATHS.pdf(codigo)}`);
      } catch (err) {
        // Created, but not consultable now: keep its id so the next attempt consults rather than creates.
        if (err instanceof ProviderUnavailableError && !(err instanceof InterHttpError && err.isRefusal))
          return { kind: 'unavailable', reason: err.message, chargeId: codigo };
        throw err;
      }
      if (outcome.kind !== 'unavailable') return outcome;
    }
    return outcome;
  }

  private view(client: InterAccountClient, codigo: string): Promise<ChargeViewType> {
    return client.callFor<ChargeViewType>(
      { method: 'GET', path: INTER_PATHS.charge(codigo), what: 'consult' },
      ChargeView,
    );
  }

  /** PUT the account's webhook URL, once per account version (again after a failure). */
  private ensureWebhook(account: ProviderAccount, state: AccountState): Promise<void> {
    state.webhook ??= state.client
      .call({
        method: 'PUT',
        path: INTER_PATHS.webhook,
        json: { webhookUrl: this.options.webhookUrl(account.id) },
        what: 'webhook registration',
      })
      .then(() => undefined)
      .catch((err: unknown) => {
        state.webhook = null;
        // Without its webhook an account's payments go unheard: no charge is issued until it is registered.
        throw err instanceof ProviderUnavailableError
          ? err
          : new ProviderUnavailableError(`inter webhook registration failed${describeError(err)}`);
      });
    return state.webhook;
  }

  /**
   * The bank account's connection state, made on first use. Keyed by the bank account (tenant and
   * account key, shared by the versions of one account): when its credentials change (a renewed
   * certificate), the old connection is closed and a new one made; what is uncertain about earlier
   * creates and the webhook registration are kept.
   */
  private async stateOf(account: ProviderAccount): Promise<AccountState> {
    const key = bankAccountOf(account);
    let opened: OpenedCredentials;
    try {
      opened = await this.options.credentials(account);
    } catch (err) {
      // The source's message names the account, never the secret.
      throw new ProviderUnavailableError((err as Error).message);
    }
    const current = this.accounts.get(key);
    if (current && current.versionId === opened.versionId) return current;
    const baseUrl = (account.baseUrl ?? this.options.defaultBaseUrl).replace(/\/+$/, '');
    const state: AccountState = {
      client: new InterAccountClient(baseUrl, opened.credentials, this.options.timeoutMs, this.options.trustedCaPem),
      baseUrl,
      versionId: opened.versionId,
      webhook: current?.webhook ?? null,
      uncertain: current?.uncertain ?? new Set(),
    };
    this.accounts.set(key, state);
    if (current) void current.client.close().catch(() => undefined);
    return state;
  }
}

/** One bank account: the versions of a tenant's account that share its key share a connection. */
function bankAccountOf(account: ProviderAccount): string {
  return `${account.tenantId}:${account.accountKey}`;
}

/** seuNumero of one of our charges (for operators matching Inter's statement to our ids). */
export { seuNumeroFor };

/** Runs `work` on every item, at most `limit` at a time; results in input order. */
async function mapLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
