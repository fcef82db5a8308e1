import {
  PIX_PATHS,
  cancelBody,
  cobvBody,
  readCobv,
  readWebhook,
  txidFor,
  webhookBody,
  type CobvView,
  type PixDialect,
} from '@payments/pix-api';
import { ServiceError } from '@payments/contracts';
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
import { BankHttpError, BankNetworkError } from '../bank-errors';
import { BankConnections, type BankConnection, type BankConnectionOptions } from '../bank-connections';
import { mapLimit } from '../map-limit';
import { ensureWebhook } from '../webhook-setup';
import { PixAccountClient, type PixEndpoint } from './client';
import { chargeState, isRemoved, registrationOutcome, requestViolations, termsOf } from './mapping';
import { sweepPix } from './sweep';

/** What the PIX adapter needs; one instance serves every account of one dialect. */
export interface PixProviderOptions extends BankConnectionOptions<PixEndpoint> {
  dialect: PixDialect;
  /** The account's base URL when it names none (Inter: INTER_BASE_URL); absent: the account must name one. */
  defaultBaseUrl?: string;
  /** The key of a bank account's PIX token (Inter: not its Cobrança token's); default the bank account. */
  tokenKey?(bankAccount: string): string;
  /** Where the bank is told to send an account's PIX notices (`/pix` is appended by the bank). */
  webhookUrl(accountId: string): string;
  /** Whether a webhook URL the bank has is one of ours (any account version's); default: equal to ours. */
  ownsWebhookUrl?(url: string): boolean;
  /** Charges registered at once for one account (the standard has a batch endpoint we do not use). Default 4. */
  concurrency?: number;
  /**
   * After an earlier create of a charge (its registration mark), how long a consult's 404 may still be
   * the bank not showing it yet: a refused create is not rejected within it. Default 30 minutes.
   */
  notShownYetMs?: number;
}

/** A consult's 404 this soon after a create may be a charge the bank has not shown yet (Inter's window). */
export const PIX_NOT_SHOWN_YET_MS = 30 * 60_000;
/** A webhook setup that failed is tried again after this long (10 webhook calls a minute at Inter). */
const WEBHOOK_RETRY_MS = 60_000;

/** A bank account's connection to its PIX API; its webhook is the PIX key's. */
type AccountState = BankConnection<PixAccountClient>;

/**
 * PIX charges with a due date (cobv) through a bank's PIX API, on the Central Bank's standard with the
 * account's dialect (docs/providers/pix.md). The txid is derived from the receivable id (txidFor), so
 * a create sent again is the same charge (PUT /cobv/{txid}) and never a second one.
 *
 * Nothing is left live at the bank behind a rejected or forgotten charge:
 * - a charge marked by an earlier attempt (createMarkedAt) or named by one (providerChargeId) is
 *   consulted (GET /cobv/{txid}) before anything is created;
 * - a create without an answer is consulted: found, registration carries on with it; otherwise pending;
 * - a refused create (400, 404, 422) is consulted: found, it carries on; a 404 within notShownYetMs of an
 *   earlier create stays pending; otherwise it is rejected;
 * - anything else (a failed consult, token or webhook call, 403, 429, 5xx) leaves it pending.
 */
export class PixProvider implements PaymentProvider {
  private readonly connections: BankConnections<PixEndpoint, PixAccountClient>;

  constructor(private readonly options: PixProviderOptions) {
    this.connections = new BankConnections(options, (basics, baseUrl, account) => {
      // A cached connection always has a URL: one without is refused here, before it is kept.
      if (baseUrl === '') throw new ProviderUnavailableError(`provider account ${account.id} names no PIX API URL`);
      try {
        return new PixAccountClient({
          ...basics,
          dialect: options.dialect,
          accountBaseUrl: baseUrl,
          tokenKey: options.tokenKey?.(basics.bankAccount) ?? basics.bankAccount,
        });
      } catch (err) {
        // The dialect cannot say where the token is (a standard account without its token_url).
        throw new ProviderUnavailableError(`provider account ${account.id}: ${(err as Error).message}`);
      }
    });
  }

  /** The txid: what identifies the charge at the bank before it answers, kept in the registration mark. */
  bankReference(receivableId: string): string {
    return txidFor(receivableId);
  }

  async registerMany(account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    const chave = account.beneficiary.pix_key;
    if (!chave)
      return requests.map(() => ({
        kind: 'rejected',
        code: 'pix_key_required',
        message: 'the bank account has no PIX key: a PIX charge needs one (tenant account --pix-key)',
      }));
    const opened = await this.connections.opened(account);
    const state = this.connections.for(account, opened);
    await this.ensureWebhook(account, state, chave, opened.credentials.replace_webhook === true);
    return mapLimit(requests, this.options.concurrency ?? 4, (request) => this.registerOne(state, chave, request));
  }

  async cancel(account: ProviderAccount, chargeId: string, _reason: string): Promise<CancellationOutcome> {
    const { client } = await this.connections.of(account);
    try {
      const view = await client.callAndRead(
        {
          method: 'PATCH',
          path: PIX_PATHS.cobv(chargeId),
          json: cancelBody(this.options.dialect),
          what: 'cancel',
          endpoint: 'cobv-cancel',
        },
        (body) => readCobv(body, this.options.dialect),
      );
      if (isRemoved(view)) return 'cancelled';
    } catch (err) {
      if (!(err instanceof BankHttpError) || !(err.isRefusal || err.status === 409)) throw err;
    }
    // Refused (or answered with the charge still there): what it is now decides. A refusal of an open or
    // unknown charge is permanent, not an outage to wait out.
    const state = await this.consult(account, chargeId);
    if (state.kind === 'cancelled') return 'cancelled';
    return state.kind === 'paid' ? 'not_open' : 'refused';
  }

  async consult(account: ProviderAccount, chargeId: string): Promise<ProviderChargeState> {
    const view = await this.view((await this.connections.of(account)).client, chargeId);
    return view === null ? { kind: 'unknown' } : chargeState(view);
  }

  /** A PIX charge has no slip: no PDF at the bank, and none is linked (its registered pdf is ''). */
  slipPdf(_account: ProviderAccount, chargeId: string): Promise<Buffer> {
    return Promise.reject(new ServiceError('not_found', `${chargeId} is a PIX charge: it has no slip PDF`));
  }

  /** Reconciliation: the received PIX and the removed cobvs of the window (sweep.ts). */
  async sweep(account: ProviderAccount, window: SweepWindow): Promise<SweepResult> {
    return sweepPix((await this.connections.of(account)).client, window);
  }

  /** Releases the accounts' connections (service stop, tests). */
  close(): Promise<void> {
    return this.connections.close();
  }

  /** Token requests made so far for an account's current connection (tests, metrics). */
  tokenRequestsOf(account: ProviderAccount): number {
    return this.connections.tokenRequestsOf(account);
  }

  private async registerOne(
    state: AccountState,
    chave: string,
    request: ChargeRequest,
  ): Promise<BatchRegistrationOutcome> {
    const txid = txidFor(request.idempotencyKey);
    try {
      const body = cobvBody(termsOf(request, txid, chave), this.options.dialect);
      const violations = requestViolations(body);
      if (violations.length > 0)
        return {
          kind: 'rejected',
          code: 'invalid_request',
          message: `not a cobv the PIX standard accepts: ${violations.join('; ')}`,
        };
      // An earlier attempt (any process, any copy of the job) may have created it: consult it first.
      if (request.createMarkedAt !== null || request.providerChargeId !== null) {
        const earlier = await this.view(state.client, txid);
        if (earlier) return registrationOutcome(earlier);
      }
      return await this.create(state, request, txid, body);
    } catch (err) {
      // Whatever failed here (a consult or token call, whatever its status) leaves the charge pending:
      // only a refused create that nothing at the bank answers for is a rejection (refused()).
      if (err instanceof ProviderUnavailableError) return { kind: 'unavailable', reason: err.message, chargeId: txid };
      throw err;
    }
  }

  /** PUT /cobv/{txid}. A create without an answer may have been stored all the same: consulted at once. */
  private async create(
    state: AccountState,
    request: ChargeRequest,
    txid: string,
    body: Record<string, unknown>,
  ): Promise<BatchRegistrationOutcome> {
    try {
      const created = await state.client.callAndRead(
        { method: 'PUT', path: PIX_PATHS.cobv(txid), json: body, what: 'create', endpoint: 'cobv-create' },
        (answer) => readCobv(answer, this.options.dialect),
      );
      return registrationOutcome(created);
    } catch (err) {
      if (err instanceof BankHttpError && err.isRefusal) return this.refused(state, request, txid, err);
      if (!(err instanceof BankNetworkError)) throw err;
      const found = await this.view(state.client, txid).catch(() => null);
      if (found) return registrationOutcome(found);
      return { kind: 'unavailable', reason: `${err.message}; the bank shows no cobv ${txid} yet`, chargeId: txid };
    }
  }

  /** A refused create: rejected only when the bank has no cobv of this txid and none can be on its way. */
  private async refused(
    state: AccountState,
    request: ChargeRequest,
    txid: string,
    refusal: BankHttpError,
  ): Promise<BatchRegistrationOutcome> {
    let found: CobvView | null;
    try {
      found = await this.view(state.client, txid);
    } catch (err) {
      return {
        kind: 'unavailable',
        reason: `${refusal.message}; consult failed: ${(err as Error).message}`,
        chargeId: txid,
      };
    }
    if (found) return registrationOutcome(found);
    // An earlier create of this charge a moment ago: the bank may not show it yet (a consult's 404), and
    // this refusal may be about that very charge. Consulted again later, never rejected now.
    const window = this.options.notShownYetMs ?? PIX_NOT_SHOWN_YET_MS;
    if (request.createMarkedAt !== null && Date.now() - request.createMarkedAt.getTime() < window)
      return {
        kind: 'unavailable',
        reason: `${refusal.message}; within ${Math.round(window / 60_000)} minutes of an earlier create`,
        chargeId: txid,
      };
    return { kind: 'rejected', code: `pix_${refusal.status}`, message: refusal.message };
  }

  /** GET /cobv/{txid}: the charge, or null when the bank has none (404). */
  private async view(client: PixAccountClient, txid: string): Promise<CobvView | null> {
    try {
      return await client.callAndRead(
        { method: 'GET', path: PIX_PATHS.cobv(txid), what: 'consult', endpoint: 'cobv-consult' },
        (body) => readCobv(body, this.options.dialect),
      );
    } catch (err) {
      if (err instanceof BankHttpError && err.status === 404) return null;
      throw err;
    }
  }

  /**
   * Points the PIX key's webhook at us, once per bank account (webhook-setup.ts): the URL set for the key
   * is read first (GET /webhook/{chave}); none, or one of ours, is set to ours (PUT); another stays
   * unless the account says replace (--replace-webhook).
   */
  private async ensureWebhook(
    account: ProviderAccount,
    state: AccountState,
    chave: string,
    replace: boolean,
  ): Promise<void> {
    const ours = this.options.webhookUrl(account.id);
    const path = PIX_PATHS.webhook(this.options.dialect.webhookKey(chave));
    await ensureWebhook(
      state.webhook,
      {
        read: async () => {
          try {
            return (
              await state.client.callAndRead(
                { method: 'GET', path, what: 'webhook read', endpoint: 'pix-webhook' },
                readWebhook,
              )
            ).webhookUrl;
          } catch (err) {
            if (err instanceof BankHttpError && err.status === 404) return null; // none set
            throw err;
          }
        },
        write: async (url) => {
          await state.client.call({
            method: 'PUT',
            path,
            json: webhookBody(url),
            what: 'webhook registration',
            endpoint: 'pix-webhook',
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
