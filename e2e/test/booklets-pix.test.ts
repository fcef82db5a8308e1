import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BookletResponse, RegisteredCallback } from '@payments/contracts';
import { dynamicPixBrCodeProblems, qrCodesInPdf } from '@payments/test-support/br-code';
import { readPdf } from '@payments/test-support/pdf-text';
import { bookletSent } from '../support/booklet-callbacks';
import { brasiliaDate, clientPayload, receivablePayload } from '../support/fixtures';
import { InterBankControls, setInterAccount } from '../support/inter-bank';
import { PixBankControls, pixSandboxTls, TXID_PATTERN } from '../support/pix-bank';
import { receivableCallbacks } from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

/*
 * A booklet (carnê) of mixed installments at an `inter` account: hybrid slips (payment_method 1) and
 * PIX charges (3, each a cobv at the bank). Read back from the PDF as a payer would read the printout:
 * every slip with its typeable line, every PIX installment with its BR Code and a QR code that reads
 * back to it, and no typeable line or barcode of its own.
 */

let system: TestSystem;
let receiver: CallbackReceiver;
let dir: string;
let interBaseUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'booklets-pix-'));
  const tls = await pixSandboxTls(dir);
  interBaseUrl = tls.interBaseUrl;
  system = await startSystem({
    withReceivables: true,
    withBooklets: true,
    env: { ...tls.env, PROVIDER_TIMEOUT_MS: '3000', CALLBACK_POLL_INTERVAL_MS: '50', DOWNLOAD_LINK_TTL_SECONDS: '60' },
  });
  receiver = await new CallbackReceiver().start();
}, 120_000);

afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('prints the PIX installments of a mixed booklet with their BR Code and QR code, and no barcode', async () => {
  if (!system.sandboxUrl) throw new Error('the system started without its bank sandbox');
  const tenant = await system.newTenant('Escola Carnê Misto');
  const integration = await new InterBankControls(system.sandboxUrl).newIntegration();
  await setInterAccount(system.databaseUrl, dir, tenant.tenantId, integration, interBaseUrl);
  const payer = clientPayload({ name: 'João Pagador' });
  expect((await tenant.api.postIdempotent('/api/v1/clients', [payer])).status).toBe(201);

  // Six installments a month apart: slips and PIX charges in turn.
  const slip = randomUUID();
  const items = Array.from({ length: 6 }, (_, i) =>
    receivablePayload(payer.client_id, receiver.url, {
      payment_slip_id: slip,
      payment_method: i % 2 === 0 ? 1 : 3,
      emission_date: brasiliaDate(),
      due_date: brasiliaDate(30 * (i + 1)),
      value: 200 + i,
      items: [],
    }),
  );
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
  const registered = (id: string) =>
    receivableCallbacks(receiver, id).find(
      (c): c is RegisteredCallback => 'type' in c && c.type === 'registered' && c.success,
    );
  await waitFor(
    () => items.every((item) => registered(item.account_receivable_id) !== undefined),
    60_000,
    'six registered callbacks',
  );
  const data = (i: number) => (registered(items[i].account_receivable_id) as RegisteredCallback).payment_data;
  const [slips, pix] = [
    [0, 2, 4].map(data),
    [1, 3, 5].map((i) => ({ ...data(i), id: items[i].account_receivable_id })),
  ];
  for (const p of pix) {
    expect(p).toMatchObject({ typeable_line: '', barcode: '', our_number: expect.stringMatching(TXID_PATTERN) });
    expect(dynamicPixBrCodeProblems(p.pix_copy_and_paste)).toEqual([]);
  }
  // Each PIX installment is a cobv at the bank, under the txid the ERP was given.
  const cobvs = await new PixBankControls(system.sandboxUrl).charges(integration.client_id);
  expect(cobvs.map((c) => c.txid).sort()).toEqual(pix.map((p) => p.our_number).sort());
  for (const s of slips) expect(s.typeable_line).toMatch(/^\d{47}$/);

  const res = await tenant.api.postIdempotent<BookletResponse>(`/api/v1/bank-slip-booklet/${slip}`, {
    url_callback: receiver.url,
  });
  expect(res.status).toBe(202);
  await waitFor(() => bookletSent(receiver, slip) !== undefined, 30_000, 'the booklet sent callback');
  const download = await fetch(bookletSent(receiver, slip)?.download ?? '');
  expect(download.status).toBe(200);
  const bytes = new Uint8Array(await download.arrayBuffer());

  const { pages } = await readPdf(bytes);
  const text = pages.join('\n');
  const digits = text
    .split('\n')
    .map((l) => l.replace(/[\s.]/g, ''))
    .join('\n');
  const compact = text.replace(/\s/g, '');
  // Each slip with its typeable line; only the three slips have one.
  for (const s of slips) expect(digits).toContain(s.typeable_line);
  expect(digits.match(/\d{47}/g) ?? []).toHaveLength(3);
  // Each PIX installment with its BR Code printed whole (wrapped over lines) and the words that say
  // it has no boleto.
  for (const p of pix) expect(compact).toContain(p.pix_copy_and_paste.replace(/\s/g, ''));
  expect(compact.split('Estaparcelanãotemboleto').length - 1).toBe(3);

  // And a QR code that reads back to each PIX installment's BR Code.
  const qrs = (await qrCodesInPdf(bytes)).flat();
  for (const p of pix) expect(qrs).toContain(p.pix_copy_and_paste);
}, 120_000);
