import {
  ChargeList,
  ChargeView,
  CreateChargeResponse,
  INTER_PATHS,
  PdfResponse,
  WebhookView,
  seuNumeroFor,
  type ChargeView as ChargeViewType,
  type CreateChargeRequest,
  type WebhookView as WebhookViewType,
} from '@payments/inter-cobranca';
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
} from '../../../domain/ports';
import { InterAccountClient, InterHttpError, InterNetworkError, type InterEndpoint } from './client';
import { chargeState, registrationOutcome, toCreateRequest } from './mapping';
import { sweepInter } from './sweep';
import { BankConnections, type BankConnection, type BankConnectionOptions } from '../bank-connections';
import { mapLimit } from '../map-limit';
import { isPixChargeId } from '../pix/mapping';
import type { PixProvider } from '../pix/pix-provider';
import { ensureWebhook } from '../webhook-setup';

/** What the Inter adapter needs; one instance serves every `inter` account. */
export interface InterProviderOptions extends BankConnectionOptions<InterEndpoint> {
  /** API root when the account sets none (INTER_BASE_URL). */
  defaultBaseUrl: string;
  /** Where Inter is told to send an account's payment webhooks. */
  webhookUrl(accountId: string): string;
  /** Whether a webhook URL Inter has is one of ours (any account version's); default: equal to ours. */
  ownsWebhookUrl?(url: string): boolean;
  /** Consults after a create before this attempt leaves the charge to a notice or a later attempt. Default [250, 1000] ms. */
  issuePollMs?: number[];
  /** numDiasAgenda: days after the due date a charge stays payable before Inter cancels it (0-60). Default 60. */
  daysPayableAfterDue?: number;
  /** Charges registered at once for one account (Inter has no batch endpoint). Default 4. */
  concurrency?: number;
  /**
   * Inter's PIX API (the PIX adapter with Inter's dialect): PIX charges of accounts with a PIX key are
   * cobvs there, not boletos. Absent: every charge is a boleto (with PIX when the account has a key).
   */
  pix?: PixProvider;
}

/**
 * Few consults after a create: each spends the account's budget, and Inter issues asynchronously, so a
 * charge not issued by then is left 'unavailable' with its codigoSolicitacao for a later attempt.
 */
const DEFAULT_POLL_MS = [250, 1_000];
const CANCEL_REASON_MAX = 50;
/**
 * Inter's duplicate control: seuNumero, valorNominal, dataVencimento and the payer's cpfCnpj are an
 * idempotency key for 30 minutes. A charge is also "not issued yet" (consult 404) within that time.
 */
export const INTER_DUPLICATE_WINDOW_MS = 30 * 60_000;
/** A webhook setup that failed is tried again after this long (the webhook endpoints allow 5 calls a minute). */
const WEBHOOK_RETRY_MS = 60_000;

/** A bank account's connection to the Cobrança API; its webhook is the Cobrança webhook. */
type AccountState = BankConnection<InterAccountClient>;

/**
 * Banco Inter: slips through Cobrança v3 (boleto with PIX), PIX charges through its PIX API (the PIX
 * adapter with Inter's dialect, `pix`), routed by the charge's kind and, afterwards, by its id (a txid
 * made by txidFor or a codigoSolicitacao). For slips, per bank account: an undici Agent with its client
 * certificate (mutual TLS), the OAuth2 token shared by every instance, and the budgets of Inter's
 * per-minute limits shared the same way (client.ts). Before the first issue the webhook Inter has is
 * read: none or one of ours is set to ours; another one is kept unless the account says replace.
 *
 * Nothing is left live at the bank behind a rejected or forgotten charge:
 * - a charge marked by an earlier attempt (ChargeRequest.createMarkedAt) is looked up by seuNumero
 *   before anything is created;
 * - a refused create (400, 404, 422) is looked up by seuNumero: found, registration carries on with it;
 *   inside Inter's 30-minute duplicate window of an earlier attempt it stays unavailable; otherwise rejected;
 * - FALHA_EMISSAO (or a charge cancelled or expired before it was registered) is rejected, with its id;
 * - anything else (a consult's 404 while Inter issues, a failed lookup, token or webhook call, 403,
 *   429, 5xx, no answer) is 'unavailable', retried later with the charge id when Inter named one.
 */
export class InterProvider implements PaymentProvider {
  private readonly connections: BankConnections<InterEndpoint, InterAccountClient>;

  constructor(private readonly options: InterProviderOptions) {
    this.connections = new BankConnections(
      options,
      (basics, baseUrl) => new InterAccountClient({ ...basics, baseUrl }),
    );
  }

  /**
   * The seuNumero, whatever the charge's kind: a slip is looked up by it; a PIX charge's txid is derived
   * from the receivable id by the PIX path itself (txidFor), so the mark needs nothing more for it.
   */
  bankReference(receivableId: string): string {
    return seuNumeroFor(receivableId);
  }

  /**
   * PIX charges go to Inter's PIX API as cobvs (no boleto reaches the payer's DDA), slips to the
   * Cobrança API; a mixed batch is split, and one part that cannot be reached leaves only its own
   * charges pending.
   */
  async registerMany(account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    const pix = this.options.pix;
    const toPix = requests.map((r) => pix !== undefined && this.isPixCharge(account, r));
    const parts = [
      { wanted: false, register: (slips: ChargeRequest[]) => this.registerSlips(account, slips) },
      { wanted: true, register: (charges: ChargeRequest[]) => pix?.registerMany(account, charges) ?? [] },
    ]
      .map((part) => ({ ...part, indexes: requests.flatMap((_r, i) => (toPix[i] === part.wanted ? [i] : [])) }))
      .filter((part) => part.indexes.length > 0);
    const settled = await Promise.allSettled(
      parts.map(async (part) => part.register(part.indexes.map((i) => requests[i]))),
    );
    // The bank not reached at all, for every part: the caller's to handle, as for any batch.
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    if (failures.length === settled.length) throw failures[0];
    const outcomes = new Array<BatchRegistrationOutcome>(requests.length);
    parts.forEach((part, k) => {
      const result = settled[k];
      if (result.status === 'rejected' && !(result.reason instanceof ProviderUnavailableError)) throw result.reason;
      part.indexes.forEach((i, j) => {
        outcomes[i] =
          result.status === 'fulfilled'
            ? result.value[j]
            : { kind: 'unavailable', reason: (result.reason as Error).message };
      });
    });
    return outcomes;
  }

  /**
   * A PIX charge of an account with a PIX key is a cobv; one that an earlier attempt made a boleto of
   * (its charge id is a codigoSolicitacao) stays a boleto, and so does one of an account without a key
   * (accepted before intake refused those: a slip, with empty PIX fields, is what its payer can pay).
   */
  private isPixCharge(account: ProviderAccount, request: ChargeRequest): boolean {
    if (request.kind !== 'pix' || !account.beneficiary.pix_key) return false;
    return request.providerChargeId === null || isPixChargeId(request.providerChargeId);
  }

  private async registerSlips(
    account: ProviderAccount,
    requests: ChargeRequest[],
  ): Promise<BatchRegistrationOutcome[]> {
    const opened = await this.connections.opened(account);
    const state = this.connections.for(account, opened);
    await this.ensureWebhook(account, state, opened.credentials.replace_webhook === true);
    return mapLimit(requests, this.options.concurrency ?? 4, (request) => this.registerOne(state, request));
  }

  async cancel(account: ProviderAccount, chargeId: string, reason: string): Promise<CancellationOutcome> {
    const pix = this.pixFor(chargeId);
    if (pix) return pix.cancel(account, chargeId, reason);
    const { client } = await this.connections.of(account);
    const motivo = (reason.trim() || 'cancelada pelo beneficiário').slice(0, CANCEL_REASON_MAX);
    try {
      await client.call({
        method: 'POST',
        path: INTER_PATHS.cancel(chargeId),
        json: { motivoCancelamento: motivo },
        what: 'cancel',
        endpoint: 'cancel',
      });
      return 'cancelled';
    } catch (err) {
      if (!(err instanceof InterHttpError) || !(err.isRefusal || err.status === 409)) throw err;
    }
    // Refused: the charge is no longer open, or unknown. What it is now decides; a refusal of an open
    // (or unknown) charge is permanent, not an outage to wait out.
    const state = await this.consult(account, chargeId);
    if (state.kind === 'cancelled') return 'cancelled';
    return state.kind === 'paid' ? 'not_open' : 'refused';
  }

  async consult(account: ProviderAccount, chargeId: string): Promise<ProviderChargeState> {
    const pix = this.pixFor(chargeId);
    if (pix) return pix.consult(account, chargeId);
    try {
      return chargeState(await this.view((await this.connections.of(account)).client, chargeId));
    } catch (err) {
      if (err instanceof InterHttpError && err.status === 404) return { kind: 'unknown' };
      throw err;
    }
  }

  async slipPdf(account: ProviderAccount, chargeId: string): Promise<Buffer> {
    const pix = this.pixFor(chargeId);
    if (pix) return pix.slipPdf(account, chargeId);
    const { client } = await this.connections.of(account);
    const answer = await client.callFor<PdfResponse>(
      { method: 'GET', path: INTER_PATHS.pdf(chargeId), what: 'pdf', endpoint: 'pdf' },
      PdfResponse,
    );
    const pdf = Buffer.from(answer.pdf, 'base64');
    if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-')
      throw new ProviderUnavailableError(`inter pdf of ${chargeId}: the answer is not a PDF`);
    return pdf;
  }

  /**
   * Reconciliation: Inter's lists and callback history for the window (a few paced calls; see sweep.ts),
   * then, for an account with a PIX key, its PIX API's lists (../pix/sweep.ts). A PIX sweep that fails
   * does not lose what the Cobrança lists found: the result is incomplete and says why.
   */
  async sweep(account: ProviderAccount, window: SweepWindow): Promise<SweepResult> {
    const slips = await sweepInter((await this.connections.of(account)).client, window);
    const pix = this.options.pix;
    if (!pix || !account.beneficiary.pix_key) return slips;
    try {
      const cobvs = await pix.sweep(account, window);
      return {
        notices: [...slips.notices, ...cobvs.notices],
        calls: slips.calls + cobvs.calls,
        complete: slips.complete && cobvs.complete,
        ...(slips.problems || cobvs.problems
          ? { problems: [...(slips.problems ?? []), ...(cobvs.problems ?? [])] }
          : {}),
      };
    } catch (err) {
      return {
        ...slips,
        complete: false,
        problems: [...(slips.problems ?? []), `PIX API: ${(err as Error).message}`],
      };
    }
  }

  /** The PIX adapter when `chargeId` is a cobv's txid (made by txidFor), else null (a codigoSolicitacao). */
  private pixFor(chargeId: string): PixProvider | null {
    return this.options.pix && isPixChargeId(chargeId) ? this.options.pix : null;
  }

  /** Releases the accounts' connections (service stop, tests). */
  async close(): Promise<void> {
    await Promise.all([this.connections.close(), this.options.pix?.close()]);
  }

  /** Token requests made so far for an account's current connection (tests, metrics). */
  tokenRequestsOf(account: ProviderAccount): number {
    return this.connections.tokenRequestsOf(account);
  }

  private async registerOne(state: AccountState, request: ChargeRequest): Promise<BatchRegistrationOutcome> {
    try {
      if (request.providerChargeId) return await this.issued(state, request, request.providerChargeId, [0]);
      const create = toCreateRequest(request, this.options.daysPayableAfterDue ?? 60);
      if (!create.ok)
        return {
          kind: 'rejected',
          code: 'invalid_request',
          message: `not a charge Inter accepts: ${create.violations.map((v) => `${v.path} ${v.message}`).join('; ')}`,
        };
      // An earlier attempt (any process, any copy of the job) may have created it: look it up first.
      if (request.createMarkedAt !== null) {
        const earlier = await this.lookUp(state, create.body);
        if (earlier) return await this.issued(state, request, earlier, [0]);
      }
      return await this.create(state, request, create.body);
    } catch (err) {
      // Whatever failed here (a lookup, consult or token call, whatever its status) leaves the charge
      // pending: only a refused create that nothing at the bank answers for is a rejection (create()).
      if (err instanceof ProviderUnavailableError) return { kind: 'unavailable', reason: err.message };
      throw err;
    }
  }

  /**
   * POSTs the create. A create without an answer may have been stored all the same, and a refused one
   * may be Inter's duplicate control refusing a second copy: both are looked up by seuNumero at once.
   */
  private async create(
    state: AccountState,
    request: ChargeRequest,
    body: CreateChargeRequest,
  ): Promise<BatchRegistrationOutcome> {
    let codigo: string;
    try {
      const created = await state.client.callFor<CreateChargeResponse>(
        { method: 'POST', path: INTER_PATHS.charges, json: body, what: 'create', endpoint: 'create' },
        CreateChargeResponse,
      );
      codigo = created.codigoSolicitacao;
    } catch (err) {
      if (err instanceof InterHttpError && err.isRefusal) return this.refused(state, request, body, err);
      if (!(err instanceof InterNetworkError)) throw err;
      let found: string | null;
      try {
        found = await this.lookUp(state, body);
      } catch {
        return { kind: 'unavailable', reason: `${err.message}; not found by seuNumero yet` };
      }
      if (found) return this.issued(state, request, found, [0]);
      return { kind: 'unavailable', reason: `${err.message}; Inter has no charge with its seuNumero` };
    }
    return this.issued(state, request, codigo, this.options.issuePollMs ?? DEFAULT_POLL_MS);
  }

  /** A refused create: rejected only when no charge of this seuNumero is at Inter and none can be on its way. */
  private async refused(
    state: AccountState,
    request: ChargeRequest,
    body: CreateChargeRequest,
    refusal: InterHttpError,
  ): Promise<BatchRegistrationOutcome> {
    let found: string | null;
    try {
      found = await this.lookUp(state, body);
    } catch (err) {
      return {
        kind: 'unavailable',
        reason: `${refusal.message}; lookup by seuNumero failed: ${(err as Error).message}`,
      };
    }
    if (found) return this.issued(state, request, found, [0]);
    // An earlier create of this charge within Inter's duplicate window: this refusal may be the duplicate
    // control, with that charge not listed yet. Looked up again later, never rejected now.
    if (request.createMarkedAt !== null && Date.now() - request.createMarkedAt.getTime() < INTER_DUPLICATE_WINDOW_MS)
      return {
        kind: 'unavailable',
        reason: `${refusal.message}; inside Inter's 30-minute duplicate window of an earlier create`,
      };
    return { kind: 'rejected', code: `inter_${refusal.status}`, message: refusal.message };
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
        endpoint: 'list',
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

  /**
   * Consults a created charge (after each delay of `pollMs`) until it is issued or the delays run out.
   * Any failure to consult, a 404 included (Inter issues asynchronously), leaves it unavailable with its id.
   */
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
        if (!(err instanceof ProviderUnavailableError)) throw err;
        const reason =
          err instanceof InterHttpError && err.status === 404
            ? `Inter has not issued ${codigo} yet (404)`
            : err.message;
        return { kind: 'unavailable', reason, chargeId: codigo };
      }
      if (outcome.kind !== 'unavailable') return outcome;
    }
    return outcome;
  }

  private view(client: InterAccountClient, codigo: string): Promise<ChargeViewType> {
    return client.callFor<ChargeViewType>(
      { method: 'GET', path: INTER_PATHS.charge(codigo), what: 'consult', endpoint: 'consult' },
      ChargeView,
    );
  }

  /**
   * Points the account's Cobrança webhook at us, once per bank account (webhook-setup.ts): the webhook
   * Inter has is read first; none, or one of ours, is set to ours; another URL stays unless the account
   * says replace (--replace-webhook).
   */
  private async ensureWebhook(account: ProviderAccount, state: AccountState, replace: boolean): Promise<void> {
    const ours = this.options.webhookUrl(account.id);
    await ensureWebhook(
      state.webhook,
      {
        read: async () => {
          try {
            const view = await state.client.callFor<WebhookViewType>(
              { method: 'GET', path: INTER_PATHS.webhook, what: 'webhook read', endpoint: 'webhook' },
              WebhookView,
            );
            return view.webhookUrl;
          } catch (err) {
            if (err instanceof InterHttpError && err.status === 404) return null; // none set
            throw err;
          }
        },
        write: async (url) => {
          await state.client.call({
            method: 'PUT',
            path: INTER_PATHS.webhook,
            json: { webhookUrl: url },
            what: 'webhook registration',
            endpoint: 'webhook',
          });
        },
      },
      {
        ours,
        replace,
        owns: (url) => this.options.ownsWebhookUrl?.(url) ?? false,
        onConflict: (registered) => this.options.observer?.webhookConflict?.(account.id, registered, ours),
        retryMs: WEBHOOK_RETRY_MS,
      },
    );
  }
}
