import ky, { HTTPError, type KyInstance } from 'ky';
import type { Beneficiary } from '@payments/contracts';
import {
  ProviderUnavailableError,
  type BatchRegistrationOutcome,
  type CancellationOutcome,
  type ChargeRequest,
  type PaymentProvider,
  type ProviderAccount,
  type ProviderCharge,
  type ProviderChargeState,
} from '../../domain/ports';
import { isLegacySandboxAccount } from './legacy-account';

export interface BankSandboxOptions {
  /** The sandbox's API root (PROVIDER_BASE_URL), unless an account names its own. */
  baseUrl: string;
  /** PROVIDER_API_KEY: one key for the whole sandbox, whichever account a call is for. */
  apiKey: string;
  timeoutMs: number;
  /** Retries of one call on 5xx and network errors, with ky's exponential backoff. */
  retries: number;
}

const BATCH_SIZE = 200;

/**
 * Answers that refuse the request itself: the same request gets the same answer, so the charges are
 * rejected rather than retried. 401, 403, 408, 409, 429 and 5xx are retried (a login, a
 * limit or the bank's state may change).
 */
const REFUSAL_STATUSES = new Set([400, 404, 422]);

interface BatchResult {
  status: number;
  charge?: ChargeResponse;
  error?: { code: string; message: string };
}

/** The account's part of each charge: whom the sandbox prints as payee, and which account it is kept under. */
function accountFields(account: ProviderAccount) {
  // Legacy receivables: no account; the sandbox applies its own default payee.
  if (isLegacySandboxAccount(account)) return {};
  return { beneficiary: beneficiaryWire(account.beneficiary), account_reference: account.id };
}

/** Unset fields are left out rather than sent as null: the sandbox fills in its defaults for them. */
function beneficiaryWire(b: Beneficiary) {
  return {
    name: b.name,
    tax_id: b.tax_id,
    city: b.city ?? undefined,
    pix_key: b.pix_key ?? undefined,
    agency: b.agency ?? undefined,
    account: b.account ?? undefined,
    address: b.address ?? undefined,
  };
}

function toWire(request: ChargeRequest, account: ProviderAccount) {
  return {
    ...accountFields(account),
    idempotency_key: request.idempotencyKey,
    kind: request.kind,
    amount_cents: request.amountCents,
    issue_date: request.issueDate,
    due_date: request.dueDate,
    payer: {
      name: request.payer.name,
      tax_id: request.payer.taxId,
      address:
        [request.payer.address, request.payer.number, request.payer.neighborhood].filter(Boolean).join(', ') ||
        undefined,
      city: request.payer.city ?? undefined,
      state: request.payer.state ?? undefined,
      zip_code: request.payer.zipCode ?? undefined,
    },
    discount: request.discount ? { amount_cents: request.discount.amountCents, until: request.discount.until } : null,
    fine_percent_bp: request.fineBp,
    interest_per_day_cents: request.interestPerDayCents,
    instructions: request.instructions,
    description_lines: request.descriptionLines.map((l) => ({
      description: l.description,
      quantity: l.quantity,
      price_cents: l.priceCents,
    })),
    reference: request.reference,
  };
}

interface ChargeResponse {
  charge_id: string;
  our_number: string;
  status: 'registered' | 'paid' | 'cancelled';
  paid_at: string | null;
  amount_paid_cents: number | null;
  fee_cents: number | null;
  method: 'boleto' | 'pix' | 'manual' | null;
  barcode: string | null;
  typeable_line: string | null;
  pix_copy_and_paste: string;
  qrcode_image_url: string;
  pdf_url: string;
}

/**
 * The payment provider adapter for the bank sandbox's charge API (HTTP, ky). Every call names the
 * tenant's account: its beneficiary and version id go with each charge (the sandbox prints the one and
 * reports payments with the other); the API key is the sandbox's own, the same for every account.
 */
export class BankSandboxProvider implements PaymentProvider {
  private readonly clients = new Map<string, KyInstance>();

  constructor(private readonly options: BankSandboxOptions) {}

  /** Registers through the bank's batch endpoint, at most 200 charges per call. */
  async registerMany(account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    const outcomes: BatchRegistrationOutcome[] = [];
    for (let i = 0; i < requests.length; i += BATCH_SIZE)
      outcomes.push(...(await this.registerChunk(account, requests.slice(i, i + BATCH_SIZE))));
    return outcomes;
  }

  private async registerChunk(
    account: ProviderAccount,
    requests: ChargeRequest[],
  ): Promise<BatchRegistrationOutcome[]> {
    let response: { results: BatchResult[] };
    try {
      response = await this.http(account)
        .post('v1/charges/batch', { json: { charges: requests.map((r) => toWire(r, account)) } })
        .json<{ results: BatchResult[] }>();
    } catch (err) {
      const refusal = await refusalOf(err);
      if (refusal) return requests.map(() => refusal);
      throw unavailable(err);
    }
    return requests.map((_, i) => {
      const r = response.results[i];
      if (r && (r.status === 200 || r.status === 201) && r.charge)
        return { kind: 'registered', charge: toCharge(r.charge) };
      if (r && REFUSAL_STATUSES.has(r.status))
        return {
          kind: 'rejected',
          code: r.error?.code ?? `provider_http_${r.status}`,
          message: r.error?.message ?? 'the provider refused the charge',
        };
      return {
        kind: 'unavailable',
        reason:
          r?.error?.message ?? (r ? `the provider answered ${r.status} for this charge` : 'no result for this charge'),
      };
    });
  }

  async cancel(account: ProviderAccount, chargeId: string, _reason: string): Promise<CancellationOutcome> {
    try {
      await this.http(account).post(`v1/charges/${encodeURIComponent(chargeId)}/cancel`);
      return 'cancelled';
    } catch (err) {
      if (err instanceof HTTPError && err.response.status === 409) return 'not_open';
      if (!(err instanceof HTTPError) || !REFUSAL_STATUSES.has(err.response.status)) throw unavailable(err);
    }
    // Refused for good: where the charge stands decides (a retry would be refused again).
    const state = await this.consult(account, chargeId);
    if (state.kind === 'cancelled') return 'cancelled';
    return state.kind === 'paid' ? 'not_open' : 'refused';
  }

  async consult(account: ProviderAccount, chargeId: string): Promise<ProviderChargeState> {
    let charge: ChargeResponse;
    try {
      charge = await this.http(account)
        .get(`v1/charges/${encodeURIComponent(chargeId)}`)
        .json<ChargeResponse>();
    } catch (err) {
      if (err instanceof HTTPError && err.response.status === 404) return { kind: 'unknown' };
      throw unavailable(err);
    }
    return chargeState(charge);
  }

  /** The sandbox's PDF is public (its pdf_url); fetched here for callers that want the bytes. */
  async slipPdf(account: ProviderAccount, chargeId: string): Promise<Buffer> {
    try {
      const body = await this.http(account)
        .get(`v1/charges/${encodeURIComponent(chargeId)}/pdf`)
        .arrayBuffer();
      return Buffer.from(body);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** One HTTP client per API root (almost always just the configured one). */
  private http(account: ProviderAccount): KyInstance {
    const baseUrl = account.baseUrl ?? this.options.baseUrl;
    let client = this.clients.get(baseUrl);
    if (!client) {
      client = ky.create({
        prefixUrl: baseUrl,
        timeout: this.options.timeoutMs,
        headers: { authorization: `Bearer ${this.options.apiKey}` },
        retry: {
          limit: this.options.retries,
          methods: ['post', 'get'],
          statusCodes: [500, 502, 503, 504],
          backoffLimit: 2_000,
        },
      });
      this.clients.set(baseUrl, client);
    }
    return client;
  }
}

function chargeState(c: ChargeResponse): ProviderChargeState {
  if (c.status === 'cancelled') return { kind: 'cancelled' };
  if (c.status !== 'paid') return { kind: 'open' };
  if (c.paid_at === null || c.amount_paid_cents === null || c.method === null)
    throw new ProviderUnavailableError(`the sandbox reports charge ${c.charge_id} paid without its payment`);
  return {
    kind: 'paid',
    payment: {
      paidAt: new Date(c.paid_at),
      amountPaidCents: c.amount_paid_cents,
      feeCents: c.fee_cents ?? 0,
      method: c.method,
    },
  };
}

function toCharge(c: ChargeResponse): ProviderCharge {
  return {
    chargeId: c.charge_id,
    ourNumber: c.our_number,
    barcode: c.barcode,
    typeableLine: c.typeable_line,
    pixCopyAndPaste: c.pix_copy_and_paste,
    qrcodeImageUrl: c.qrcode_image_url,
    pdfUrl: c.pdf_url,
  };
}

/**
 * A whole-request refusal (400, 404, 422) as the rejection of every charge in it, code
 * `provider_http_<status>` and the bank's own message; undefined for any other failure.
 */
async function refusalOf(err: unknown): Promise<BatchRegistrationOutcome | undefined> {
  if (!(err instanceof HTTPError) || !REFUSAL_STATUSES.has(err.response.status)) return undefined;
  const status = err.response.status;
  const body = (await err.response.json().catch(() => undefined)) as
    { error?: { code?: unknown; message?: unknown } } | undefined;
  const said = [body?.error?.code, body?.error?.message].filter((v) => typeof v === 'string').join(': ');
  return {
    kind: 'rejected',
    code: `provider_http_${status}`,
    message: `the provider refused the request (HTTP ${status})${said ? `: ${said.slice(0, 500)}` : ''}`,
  };
}

function unavailable(err: unknown): ProviderUnavailableError {
  if (err instanceof ProviderUnavailableError) return err;
  if (err instanceof HTTPError) return new ProviderUnavailableError(`provider answered HTTP ${err.response.status}`);
  return new ProviderUnavailableError((err as Error).message ?? 'provider unreachable');
}
