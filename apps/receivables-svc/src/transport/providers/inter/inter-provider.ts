import { INTER_PATHS, PdfResponse, seuNumeroFor } from '@payments/inter-cobranca';
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
import { InterAccountClient, InterHttpError, type InterEndpoint } from './client';
import { chargeState } from './mapping';
import { InterSlipRegistration, viewCharge } from './registration';
import { sweepInter } from './sweep';
import { ensureInterWebhook } from './webhook-registration';
import { BankConnections, type BankConnectionOptions } from '../bank-connections';
import { mapLimit } from '../map-limit';
import { isPixChargeId } from '../pix/mapping';
import type { PixProvider } from '../pix/pix-provider';

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

const CANCEL_REASON_MAX = 50;

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
  private readonly slips: InterSlipRegistration;

  constructor(private readonly options: InterProviderOptions) {
    this.connections = new BankConnections(
      options,
      (basics, baseUrl) => new InterAccountClient({ ...basics, baseUrl }),
    );
    this.slips = new InterSlipRegistration(options);
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
    await ensureInterWebhook(this.options, account, state, opened.credentials.replace_webhook === true);
    return mapLimit(requests, this.options.concurrency ?? 4, (request) => this.slips.registerOne(state, request));
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
      return chargeState(await viewCharge((await this.connections.of(account)).client, chargeId));
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
}
