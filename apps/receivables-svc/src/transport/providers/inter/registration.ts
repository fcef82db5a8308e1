import {
  ChargeList,
  ChargeView,
  CreateChargeResponse,
  INTER_PATHS,
  type ChargeView as ChargeViewType,
  type CreateChargeRequest,
} from '@payments/inter-cobranca';
import { ProviderUnavailableError, type BatchRegistrationOutcome, type ChargeRequest } from '../../../domain/ports';
import type { BankConnection } from '../bank-connections';
import { InterAccountClient, InterHttpError, InterNetworkError } from './client';
import { registrationOutcome, toCreateRequest } from './mapping';

/**
 * Few consults after a create: each spends the account's budget, and Inter issues asynchronously, so a
 * charge not issued by then is left 'unavailable' with its codigoSolicitacao for a later attempt.
 */
const DEFAULT_POLL_MS = [250, 1_000];
/**
 * Inter's duplicate control: seuNumero, valorNominal, dataVencimento and the payer's cpfCnpj are an
 * idempotency key for 30 minutes. A charge is also "not issued yet" (consult 404) within that time.
 */
export const INTER_DUPLICATE_WINDOW_MS = 30 * 60_000;

/** A bank account's connection to the Cobrança API; its webhook is the Cobrança webhook. */
export type AccountState = BankConnection<InterAccountClient>;

/** How a slip is registered: the InterProviderOptions of the same names. */
export interface SlipRegistrationOptions {
  issuePollMs?: number[];
  daysPayableAfterDue?: number;
}

/**
 * Registers slips (boleto with PIX) with Inter's Cobrança API, one charge at a time, for InterProvider;
 * see there for how nothing is left live at the bank behind a rejected or forgotten charge.
 */
export class InterSlipRegistration {
  constructor(private readonly options: SlipRegistrationOptions) {}

  async registerOne(state: AccountState, request: ChargeRequest): Promise<BatchRegistrationOutcome> {
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
        const view = await viewCharge(state.client, codigo);
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
}

export function viewCharge(client: InterAccountClient, codigo: string): Promise<ChargeViewType> {
  return client.callFor<ChargeViewType>(
    { method: 'GET', path: INTER_PATHS.charge(codigo), what: 'consult', endpoint: 'consult' },
    ChargeView,
  );
}
