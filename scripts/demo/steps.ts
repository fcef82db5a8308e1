import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  isBooklet,
  isCancellation,
  isPayment,
  isRegistration,
  type CallbackBody,
  type PaymentData,
  type ReceivedCallback,
} from './callbacks';
import { formatTypeableLine, pixPrefix, reais, shortId } from './format';
import { ok, PaymentsApiError, PaymentsClient, type components } from '@payments/sdk';
import { networkCause, requestJson } from './http';
import type { DemoOptions } from './options';
import type { DemoPlan, PlannedCharge } from './plan';
import type { CallbackReceiver } from './receiver';
import type { StepResult } from './report';
import type { TenantCredentials } from './tenant';

/** One element of the search answer (the interface spec, `paymento_type` spelling). */
export type SearchItem = components['schemas']['SearchResultItem'];

// ---- the system ------------------------------------------------------------------------------

export async function checkSystem(options: DemoOptions): Promise<StepResult<void>> {
  await probe('gateway', options.gatewayUrl, '/healthz');
  const behaviour = await probe<{ mode: string }>('bank sandbox', options.bankSandboxUrl, '/sandbox/behaviour');
  if (behaviour.mode === 'reject' || behaviour.mode === 'down') {
    throw new Error(
      `the bank sandbox is in mode "${behaviour.mode}"; POST ${options.bankSandboxUrl}/sandbox/behaviour {"mode":"normal"} first`,
    );
  }
  return {
    value: undefined,
    facts: `gateway ${options.gatewayUrl} up, bank sandbox ${options.bankSandboxUrl} up (mode ${behaviour.mode})`,
  };
}

async function probe<T>(what: string, baseUrl: string, path: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(baseUrl + path, { signal: AbortSignal.timeout(5000) });
  } catch (err) {
    throw new Error(
      `${what} not reachable at ${baseUrl} (${networkCause(err)}): run npm start first, or point GATEWAY_URL / BANK_SANDBOX_URL at the system`,
      { cause: err },
    );
  }
  if (!res.ok) throw new Error(`${what} at ${baseUrl} answered ${res.status} to GET ${path}`);
  return (await res.json()) as T;
}

// ---- tenant, token, clients, charges -----------------------------------------------------------

export async function authenticate(
  options: DemoOptions,
  tenant: TenantCredentials,
): Promise<StepResult<PaymentsClient>> {
  // The SDK exchanges the integration token for a JWT and renews it before it expires.
  const client = new PaymentsClient({ baseUrl: options.gatewayUrl, integrationToken: tenant.integration_token });
  const token = await client.tokens.token().catch((err: unknown) => {
    const hint =
      err instanceof PaymentsApiError && err.status === 401
        ? ' (was the tenant created in the database the gateway uses? check DATABASE_URL)'
        : '';
    throw new Error(`${err instanceof Error ? err.message : String(err)}${hint}`, { cause: err });
  });
  return {
    value: client,
    facts: `integration token -> JWT (token_type ${token.tokenType}, expires_in ${token.expiresInSeconds} s)`,
  };
}

export async function registerClients(api: PaymentsClient, plan: DemoPlan): Promise<StepResult<void>> {
  // Mutating calls carry a fresh Idempotency-Key from the SDK, and are retried on 429 and 503.
  const res = ok(await api.api.POST('/api/v1/clients', { body: plan.clients }), 'POST /api/v1/clients');
  const created = res.total_created_clients.length;
  if (created !== plan.clients.length)
    throw new Error(`expected ${plan.clients.length} clients created, the gateway created ${created}`);
  const names = plan.clients
    .map((c) => `${c.name} (${c.cnpj_cpf.length > 14 ? 'CNPJ' : 'CPF'} ${c.cnpj_cpf})`)
    .join(', ');
  return { value: undefined, facts: `201: ${created} created: ${names}` };
}

export async function issueCharges(api: PaymentsClient, plan: DemoPlan): Promise<StepResult<void>> {
  ok(
    await api.api.POST('/api/v1/accounts-receivable', { body: plan.charges.map((c) => c.payload) }),
    'POST /api/v1/accounts-receivable',
  );
  const slips = plan.charges.filter((c) => c.payload.payment_method === 1).length;
  const installments = plan.charges.filter((c) => c.role === 'installment').length;
  return {
    value: undefined,
    facts: `202: ${plan.charges.length} charges (${slips} hybrid slips, ${plan.charges.length - slips} PIX), ${installments} installments of booklet ${shortId(plan.bookletSlipId)}`,
  };
}

// ---- callbacks ---------------------------------------------------------------------------------

export type Registrations = Map<string, PaymentData>;

export async function waitForRegistrations(
  receiver: CallbackReceiver,
  plan: DemoPlan,
  timeoutMs: number,
): Promise<StepResult<Registrations>> {
  const registrations = await receiver.waitFor('the registered callbacks', timeoutMs, (callbacks) =>
    registeredSoFar(callbacks, plan.charges),
  );
  const slip = plan.charges.find((c) => c.payload.payment_method === 1);
  const pix = plan.charges.find((c) => c.payload.payment_method === 3);
  const line = slip ? formatTypeableLine(registrations.get(slip.payload.account_receivable_id)!.typeable_line) : '-';
  const copyAndPaste = pix ? pixPrefix(registrations.get(pix.payload.account_receivable_id)!.pix_copy_and_paste) : '-';
  return {
    value: registrations,
    facts: `${registrations.size}/${plan.charges.length} registered, signatures valid; line ${line}; PIX ${copyAndPaste}`,
  };
}

/** Every charge's payment data once all are registered; throws when the provider rejected one. */
function registeredSoFar(callbacks: ReceivedCallback[], charges: PlannedCharge[]): Registrations | undefined {
  const found: Registrations = new Map();
  for (const charge of charges) {
    const body = bodyOf(callbacks, (b) => isRegistration(b, charge.payload.account_receivable_id));
    if (body?.success === false)
      throw new Error(`the provider rejected ${charge.label}: ${body.error?.code} ${body.error?.message}`);
    if (body?.payment_data) found.set(charge.payload.account_receivable_id, body.payment_data);
  }
  return found.size === charges.length ? found : undefined;
}

function bodyOf(callbacks: ReceivedCallback[], match: (body: CallbackBody) => boolean): CallbackBody | undefined {
  return callbacks.find((c) => match(c.body))?.body;
}

export async function waitForPayment(
  receiver: CallbackReceiver,
  charge: PlannedCharge,
  timeoutMs: number,
): Promise<StepResult<CallbackBody>> {
  const id = charge.payload.account_receivable_id;
  const paid = await receiver.waitFor('the paid callback', timeoutMs, (callbacks) =>
    bodyOf(callbacks, (b) => isPayment(b, id)),
  );
  return {
    value: paid,
    facts: `paid: payment_type ${paid.payment_type}, amount_paid ${reais(paid.amount_paid ?? 0)}, fee_amount ${reais(paid.fee_amount ?? 0)}, payment_date ${paid.payment_date}`,
  };
}

export async function waitForCancellation(
  receiver: CallbackReceiver,
  charge: PlannedCharge,
  timeoutMs: number,
): Promise<StepResult<void>> {
  const id = charge.payload.account_receivable_id;
  const result = await receiver.waitFor('the cancellation callback', timeoutMs, (callbacks) =>
    bodyOf(callbacks, (b) => isCancellation(b, id)),
  );
  if (result.status !== 'success') throw new Error(`cancellation of ${charge.label} failed: ${result.message}`);
  return { value: undefined, facts: `status ${result.status}: ${result.message}` };
}

export async function waitForBooklet(
  receiver: CallbackReceiver,
  plan: DemoPlan,
  timeoutMs: number,
): Promise<StepResult<string>> {
  const sent = await receiver.waitFor('the booklet callback', timeoutMs, (callbacks) =>
    bodyOf(callbacks, (b) => isBooklet(b, plan.bookletSlipId)),
  );
  if (sent.success !== true || !sent.download)
    throw new Error(`the booklet failed: ${sent.error?.code} ${sent.error?.message}`);
  const link = new URL(sent.download);
  const expires = Number(link.searchParams.get('expires'));
  const until = Number.isFinite(expires) && expires > 0 ? `, expires ${new Date(expires * 1000).toISOString()}` : '';
  return {
    value: sent.download,
    facts: `sent: signed link ${link.origin}${link.pathname.replace(/[^/]+$/, '')}...${until}`,
  };
}

// ---- pay, cancel, booklet ----------------------------------------------------------------------

export async function payAtSandbox(
  options: DemoOptions,
  charge: PlannedCharge,
  registrations: Registrations,
): Promise<StepResult<void>> {
  const ourNumber = registrations.get(charge.payload.account_receivable_id)!.our_number;
  const method = charge.payload.payment_method === 3 ? 'pix' : 'boleto';
  const res = await requestJson<{ status: string; amount_paid_cents: number; fee_cents: number }>({
    method: 'POST',
    url: `${options.bankSandboxUrl}/sandbox/charges/${ourNumber}/pay`,
    body: { method },
    expect: [200],
  });
  return {
    value: undefined,
    facts: `our_number ${ourNumber} paid by ${method} at the bank: ${res.body.status}, ${reais(res.body.amount_paid_cents / 100)} (fee ${reais(res.body.fee_cents / 100)})`,
  };
}

export async function cancelCharge(api: PaymentsClient, charge: PlannedCharge): Promise<StepResult<void>> {
  const res = ok(
    await api.api.POST('/api/v1/accounts-receivable/{uuid}/cancel', {
      params: { path: { uuid: charge.payload.account_receivable_id } },
    }),
    'cancel',
  );
  return {
    value: undefined,
    facts: `202 ${res.status}: ${res.message} (${charge.label}, ${reais(charge.payload.value)})`,
  };
}

export async function requestBooklet(
  api: PaymentsClient,
  plan: DemoPlan,
  urlCallback: string,
): Promise<StepResult<void>> {
  const res = ok(
    await api.api.POST('/api/v1/bank-slip-booklet/{uuid}', {
      params: { path: { uuid: plan.bookletSlipId } },
      body: { url_callback: urlCallback },
    }),
    'POST /api/v1/bank-slip-booklet',
  );
  return { value: undefined, facts: `202 ${res.type}: ${res.message}` };
}

export async function downloadBooklet(
  downloadUrl: string,
  plan: DemoPlan,
  outputDir: string,
): Promise<StepResult<string>> {
  const res = await fetch(downloadUrl).catch((err: unknown) => {
    throw new Error(`GET ${downloadUrl} failed: ${networkCause(err)}`);
  });
  if (res.status !== 200) throw new Error(`GET ${downloadUrl} answered ${res.status}`);
  const pdf = Buffer.from(await res.arrayBuffer());
  if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-')
    throw new Error(`the download is not a PDF (${res.headers.get('content-type')})`);
  await mkdir(outputDir, { recursive: true });
  const file = join(outputDir, `booklet-${plan.bookletSlipId}.pdf`);
  await writeFile(file, pdf);
  return {
    value: file,
    facts: `${file} (${pdf.length} bytes, ${res.headers.get('content-type')}), no bearer token needed`,
  };
}

// ---- search and consult ------------------------------------------------------------------------

const STATE_LABELS = ['Pendente', 'Aprovada', 'Rejeitada', 'Cancelada'];

export async function searchAll(api: PaymentsClient, plan: DemoPlan): Promise<StepResult<Map<string, SearchItem>>> {
  const found = await search(api, plan, 'all');
  const summary = STATE_LABELS.map((label) => [label, found.filter((i) => i.status_payment === label).length] as const)
    .filter(([, n]) => n > 0)
    .map(([label, n]) => `${n} ${label}`)
    .join(', ');
  return {
    value: new Map(found.map((i) => [i.accounts_receivable_id, i])),
    facts: `state all, emission ${plan.emissionDate}: ${found.length} found: ${summary}`,
  };
}

export async function searchApproved(
  api: PaymentsClient,
  plan: DemoPlan,
  paid: PlannedCharge,
): Promise<StepResult<void>> {
  const found = await search(api, plan, 'approved');
  const item = found.find((i) => i.accounts_receivable_id === paid.payload.account_receivable_id);
  if (!item || found.length !== 1) throw new Error(`expected only the paid charge, found ${found.length} approved`);
  return {
    value: undefined,
    facts: `state approved: ${found.length} found: ${shortId(item.accounts_receivable_id)} ${item.client_name}, ${item.status_payment}, paymento_type ${item.paymento_type}`,
  };
}

/** Every page of the search: the SDK follows X-Next-Cursor. */
async function search(api: PaymentsClient, plan: DemoPlan, state: SearchState): Promise<SearchItem[]> {
  const found: SearchItem[] = [];
  for await (const item of api.searchReceivables({ state, start_date: plan.emissionDate, end_date: plan.emissionDate }))
    found.push(item);
  return found;
}

type SearchState = components['schemas']['SearchRequest']['state'];

export async function consultPaid(api: PaymentsClient, paid: PlannedCharge): Promise<StepResult<void>> {
  const r = ok(
    await api.api.POST('/api/v1/accounts-receivable/{uuid}/consult-transaction', {
      params: { path: { uuid: paid.payload.account_receivable_id } },
    }),
    'consult-transaction',
  );
  if (r.status_payment !== 'Aprovada') throw new Error(`expected Aprovada, the gateway says ${r.status_payment}`);
  return {
    value: undefined,
    facts: `${r.status_payment}, payment_type ${r.payment_type}, amount_due ${reais(r.amount_due)}, amount_paid ${reais(r.amount_paid)}, fee_amount ${reais(r.fee_amount)}, payment_date ${r.payment_date}`,
  };
}
