import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { BookletResponse, CallbackEventView, Problem } from '@payments/contracts';
import { signLink } from '@payments/signed-links';
import { readPdf } from '@payments/test-support/pdf-text';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { bookletSent, isReceivableCallback, receivedCallbacks } from '../support/booklet-callbacks';
import { isCancellationResult, isPaid, isRegistered, payAtSandbox } from '../support/receivable-callbacks';

let system: TestSystem;
let tenant: TestTenant;
let receiver: CallbackReceiver;
let clientId: string;
/** The callbacks of these receivables. */
const receivableCallbacksOf = (ids: ReadonlySet<string>) =>
  receivedCallbacks(receiver)
    .filter(isReceivableCallback)
    .filter((c) => ids.has(c.accounts_receivable_id));

beforeAll(async () => {
  system = await startSystem({
    withReceivables: true,
    withBooklets: true,
    env: { CALLBACK_POLL_INTERVAL_MS: '50', DOWNLOAD_LINK_TTL_SECONDS: '60' },
  });
  tenant = await system.newTenant('Loja Carnê');
  receiver = await new CallbackReceiver().start();
  const client = clientPayload({ name: 'João Pagador' });
  clientId = client.client_id;
  await tenant.api.postIdempotent('/api/v1/clients', [client]);
});
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

async function issueInstallments(
  paymentSlipId: string,
  count: number,
  extra: (i: number) => Record<string, unknown> = () => ({}),
) {
  const items = Array.from({ length: count }, (_, i) =>
    receivablePayload(clientId, receiver.url, {
      payment_slip_id: paymentSlipId,
      due_date: `2027-${String(12 - i).padStart(2, '0')}-10`,
      value: 100 + i,
      ...extra(i),
    }),
  );
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
  return items;
}

it('builds a 12-installment booklet: preparing, then a sent callback whose signed link serves the PDF with every typeable line', async () => {
  const slip = randomUUID();
  const items = await issueInstallments(slip, 12);
  const ids = new Set(items.map((i) => i.account_receivable_id));
  await waitFor(() => receivableCallbacksOf(ids).length === 12, 20_000, 'registrations');

  const res = await tenant.api.postIdempotent<BookletResponse>(`/api/v1/bank-slip-booklet/${slip}`, {
    url_callback: receiver.url,
  });
  expect(res.status).toBe(202);
  expect(res.json).toEqual({
    success: true,
    type: 'preparing',
    message: expect.stringMatching(/12 installment/),
    payment_slip_id: slip,
  });

  await waitFor(() => bookletSent(receiver, slip) !== undefined, 30_000, 'sent callback');
  const sent = bookletSent(receiver, slip)!;
  expect(sent).toEqual({
    success: true,
    type: 'sent',
    payment_slip_id: slip,
    download: expect.stringContaining(`${system.gateway.url}/api/v1/bank-slip-booklet/downloads/`),
    installments: 12,
  });

  // The link can be read back from the event's detail too (GET /api/v1/callbacks/{webhook-id}).
  const sentDelivery = receiver.received.find((x) => isDeepStrictEqual(JSON.parse(x.body), sent))!;
  const event = await tenant.api.send<CallbackEventView>(
    'GET',
    `/api/v1/callbacks/${sentDelivery.headers['webhook-id']}`,
  );
  expect(event.status).toBe(200);
  expect(event.json).toMatchObject({ event_type: 'booklet.sent', payload: sent });
  expect(event.json.payload?.download).toBe(sent.download);

  const pdf = await fetch(sent.download); // no bearer token
  expect(pdf.status).toBe(200);
  expect(pdf.headers.get('content-type')).toContain('application/pdf');
  const { pages } = await readPdf(new Uint8Array(await pdf.arrayBuffer()));
  const text = pages.join('\n');
  const digits = text
    .split('\n')
    .map((l) => l.replace(/[\s.]/g, ''))
    .join('\n');
  const lines = receivableCallbacksOf(ids)
    .filter(isRegistered)
    .map((c) => c.payment_data.typeable_line);
  expect(lines).toHaveLength(12);
  for (const line of lines) expect(digits).toContain(line);
  expect(text).toContain('João Pagador');
  // The payee is the tenant's beneficiary: in development, its name at the sandbox's payee CNPJ.
  expect(text).toContain('Loja Carnê');
  expect(text).toContain('11.222.333/0001-81');
  expect(pages).toHaveLength(1 + Math.ceil(12 / 3)); // cover, then 3 installments per page

  // Altered or expired links are refused.
  const url = new URL(sent.download);
  const altered = new URL(url);
  altered.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 60));
  expect((await fetch(altered)).status).toBe(403);
  const otherId = new URL(url);
  otherId.pathname = otherId.pathname.replace(/[0-9a-f-]{36}$/, randomUUID());
  expect((await fetch(otherId)).status).toBe(403);
  const unsigned = new URL(url);
  unsigned.search = '';
  const refused = await fetch(unsigned);
  expect(refused.status).toBe(403);
  expect(refused.headers.get('content-type')).toContain('application/problem+json');
});

it('answers 410 for an expired link', async () => {
  const id = randomUUID();
  const own = signLink('development-download-link-secret', id, new Date(Date.now() - 1000));
  expect(
    (
      await fetch(
        `${system.gateway.url}/api/v1/bank-slip-booklet/downloads/${id}?expires=${own.expires}&signature=${own.signature}`,
      )
    ).status,
  ).toBe(410);
});

it('leaves cancelled installments out, and waits for installments still being registered', async () => {
  const slip = randomUUID();
  const items = await issueInstallments(slip, 4, (i) => (i === 3 ? { payment_method: 3 } : {}));
  const ids = new Set(items.map((i) => i.account_receivable_id));
  await waitFor(() => receivableCallbacksOf(ids).length === 4, 20_000, 'registrations');
  expect(
    (await tenant.api.postIdempotent(`/api/v1/accounts-receivable/${items[0].account_receivable_id}/cancel`, undefined))
      .status,
  ).toBe(202);
  const cancelled = new Set([items[0].account_receivable_id]);
  await waitFor(
    () =>
      receivableCallbacksOf(cancelled)
        .filter(isCancellationResult)
        .some((c) => c.status === 'success'),
    15_000,
    'cancelled',
  );

  await fetch(`${system.sandboxUrl}/sandbox/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode: 'down' }),
  });
  const late = receivablePayload(clientId, receiver.url, { payment_slip_id: slip, due_date: '2027-06-10' });
  try {
    await tenant.api.postIdempotent('/api/v1/accounts-receivable', [late]);
    const res = await tenant.api.postIdempotent<BookletResponse>(`/api/v1/bank-slip-booklet/${slip}`, {
      url_callback: receiver.url,
    });
    expect(res.status).toBe(202);
    expect(res.json.message).toMatch(/1 of them are still being registered/);
    await new Promise((r) => setTimeout(r, 1500));
    expect(bookletSent(receiver, slip)).toBeUndefined();
  } finally {
    await fetch(`${system.sandboxUrl}/sandbox/behaviour`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'normal' }),
    });
  }
  await waitFor(() => bookletSent(receiver, slip) !== undefined, 40_000, 'sent after registration');
  const sent = bookletSent(receiver, slip)!;
  expect(sent.installments).toBe(4); // three left after the cancellation, plus the late one
  const { pages } = await readPdf(new Uint8Array(await (await fetch(sent.download)).arrayBuffer()));
  expect(pages).toHaveLength(1 + Math.ceil(4 / 3));
  const text = pages.join('\n');
  expect(text).toMatch(/1\/4/);
  expect(text).not.toMatch(/\d\/5/);
});

it('prints a paid installment as paid on its payment day, by due date among the open ones, with nothing to pay', async () => {
  const slip = randomUUID();
  const items = await issueInstallments(slip, 3); // due 10/12, 10/11, 10/10/2027: issued latest first
  const ids = new Set(items.map((i) => i.account_receivable_id));
  await waitFor(() => receivableCallbacksOf(ids).length === 3, 20_000, 'registrations');
  const registered = new Map(
    receivableCallbacksOf(ids)
      .filter(isRegistered)
      .map((c) => [c.accounts_receivable_id, c.payment_data]),
  );
  const november = items[1];
  const paidId = november.account_receivable_id;
  const pay = await payAtSandbox(system.sandboxUrl!, registered.get(paidId)!.our_number!, 'boleto');
  expect(pay.status).toBe(200);
  const paidCallback = () => receivableCallbacksOf(new Set([paidId])).find(isPaid);
  await waitFor(() => paidCallback() !== undefined, 20_000, 'paid callback');
  const paidOn = paidCallback()!.payment_date.slice(0, 10).split('-').reverse().join('/');

  await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url });
  await waitFor(() => bookletSent(receiver, slip) !== undefined, 30_000, 'sent callback');
  const sent = bookletSent(receiver, slip)!;
  expect(sent.installments).toBe(3);
  const { pages } = await readPdf(new Uint8Array(await (await fetch(sent.download)).arrayBuffer()));
  const parts = pages.slice(1).join('\n');
  const digits = parts
    .split('\n')
    .map((l) => l.replace(/[\s.]/g, ''))
    .join('\n');
  expect(parts).toContain(`PAGO em ${paidOn}`);
  expect(digits).not.toContain(registered.get(paidId)!.typeable_line);
  for (const open of [items[0], items[2]])
    expect(digits).toContain(registered.get(open.account_receivable_id)!.typeable_line);
  // By due date: October is 1/3, the paid November 2/3, December 3/3.
  const at = (needle: string) => parts.indexOf(needle);
  expect(at('Parcela 1/3')).toBeLessThan(at('10/10/2027'));
  expect(at('Parcela 2/3')).toBeLessThan(at('10/11/2027'));
  expect(at('10/11/2027')).toBeLessThan(at(`PAGO em ${paidOn}`));
  expect(at(`PAGO em ${paidOn}`)).toBeLessThan(at('Parcela 3/3'));
  expect(at('Parcela 3/3')).toBeLessThan(at('10/12/2027'));
});

describe('bad input', () => {
  it("answers 404 for an unknown or another tenant's payment_slip_id, 422 for a bad url_callback, 400 without Idempotency-Key", async () => {
    expect(
      (await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${randomUUID()}`, { url_callback: receiver.url }))
        .status,
    ).toBe(404);
    const slip = randomUUID();
    await issueInstallments(slip, 1);
    const other = await system.newTenant('Other');
    expect(
      (await other.api.postIdempotent(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url })).status,
    ).toBe(404);
    const bad = await tenant.api.postIdempotent<Problem>(`/api/v1/bank-slip-booklet/${slip}`, {
      url_callback: 'ftp://x',
    });
    expect(bad.status).toBe(422);
    expect(bad.json.errors?.[0].path).toBe('/url_callback');
    expect((await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${slip}`, {})).status).toBe(422);
    expect(
      (await tenant.api.postIdempotent('/api/v1/bank-slip-booklet/nope', { url_callback: receiver.url })).status,
    ).toBe(422);
    expect((await tenant.api.post(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url })).status).toBe(
      400,
    );
    expect((await system.api.post(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url })).status).toBe(
      401,
    );
  });
});
