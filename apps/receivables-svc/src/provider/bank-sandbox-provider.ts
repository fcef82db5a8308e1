import ky, { HTTPError, type KyInstance } from 'ky';
import {
  ProviderUnavailableError,
  type CancellationOutcome,
  type ChargeRequest,
  type PaymentProvider,
  type ProviderCharge,
  type BatchRegistrationOutcome,
} from '../domain/ports';

export interface BankSandboxOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Retries of one call on 5xx and network errors, with ky's exponential backoff. */
  retries: number;
}

const BATCH_SIZE = 200;

interface BatchResult {
  status: number;
  charge?: ChargeResponse;
  error?: { code: string; message: string };
}

function toWire(request: ChargeRequest) {
  return {
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
  barcode: string | null;
  typeable_line: string | null;
  pix_copy_and_paste: string;
  qrcode_image_url: string;
  pdf_url: string;
}

/**
 * The payment provider adapter for the bank sandbox's charge API (HTTP, ky). A real bank's adapter
 * implements the same PaymentProvider interface and is chosen by configuration.
 */
export class BankSandboxProvider implements PaymentProvider {
  private readonly http: KyInstance;

  constructor(options: BankSandboxOptions) {
    this.http = ky.create({
      prefixUrl: options.baseUrl,
      timeout: options.timeoutMs,
      headers: { authorization: `Bearer ${options.apiKey}` },
      retry: {
        limit: options.retries,
        methods: ['post', 'get'],
        statusCodes: [500, 502, 503, 504],
        backoffLimit: 2_000,
      },
    });
  }

  /** Registers through the bank's batch endpoint, at most 200 charges per call. */
  async registerMany(requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    const outcomes: BatchRegistrationOutcome[] = [];
    for (let i = 0; i < requests.length; i += BATCH_SIZE)
      outcomes.push(...(await this.registerChunk(requests.slice(i, i + BATCH_SIZE))));
    return outcomes;
  }

  private async registerChunk(requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    let response: { results: BatchResult[] };
    try {
      response = await this.http
        .post('v1/charges/batch', { json: { charges: requests.map(toWire) } })
        .json<{ results: BatchResult[] }>();
    } catch (err) {
      throw unavailable(err);
    }
    return requests.map((_, i) => {
      const r = response.results[i];
      if (r && (r.status === 200 || r.status === 201) && r.charge)
        return { kind: 'registered', charge: toCharge(r.charge) };
      if (r && r.status >= 400 && r.status < 500)
        return {
          kind: 'rejected',
          code: r.error?.code ?? `http_${r.status}`,
          message: r.error?.message ?? 'the provider refused the charge',
        };
      return { kind: 'unavailable', reason: r?.error?.message ?? 'no result for this charge' };
    });
  }

  async cancel(chargeId: string): Promise<CancellationOutcome> {
    try {
      await this.http.post(`v1/charges/${encodeURIComponent(chargeId)}/cancel`);
      return 'cancelled';
    } catch (err) {
      if (err instanceof HTTPError && err.response.status === 409) return 'not_open';
      throw unavailable(err);
    }
  }
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

function unavailable(err: unknown): ProviderUnavailableError {
  if (err instanceof ProviderUnavailableError) return err;
  if (err instanceof HTTPError) return new ProviderUnavailableError(`provider answered HTTP ${err.response.status}`);
  return new ProviderUnavailableError((err as Error).message ?? 'provider unreachable');
}
