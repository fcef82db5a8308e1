import { randomUUID } from 'node:crypto';
import { readPdf } from '@payments/test-support/pdf-text';
import { brCodeProblems, parseBrCode } from '@payments/test-support/slip-checks';
import type { RegisteredCallback } from '@payments/contracts';
import { setProviderAccount } from '../support/admin-cli';
import { bookletSent } from '../support/booklet-callbacks';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { asRegistered, receivableCallbacks } from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/**
 * docs/architecture.md, "Each tenant is paid into its own account": two tenants with different
 * beneficiaries, charging in the same second, each see only their own beneficiary on the slip PDF,
 * in the BR Code (fields 59, 60 and the PIX key in 26) and as the booklet's payee.
 */
interface Company {
  label: string;
  name: string;
  taxId: string;
  city: string;
  pixKey: string;
  /** What BR Code fields 59 and 60 must say (ASCII upper case, cut to 25 and 15). */
  merchantName: string;
  merchantCity: string;
}

const companies: Company[] = [
  {
    label: 'A',
    name: 'Açougue Irmãos Ferreira Comércio de Carnes Ltda',
    taxId: '12.345.678/0001-95',
    city: 'Ribeirão Preto',
    pixKey: 'financeiro@acougue-ferreira.com.br',
    merchantName: 'ACOUGUE IRMAOS FERREIRA C',
    merchantCity: 'RIBEIRAO PRETO',
  },
  {
    label: 'B',
    name: 'Escola Pequeno Príncipe',
    taxId: '45.723.174/0001-10',
    city: 'Florianópolis',
    pixKey: '+5548999990000',
    merchantName: 'ESCOLA PEQUENO PRINCIPE',
    merchantCity: 'FLORIANOPOLIS',
  },
];

let system: TestSystem;
let receiver: CallbackReceiver;
const tenants = new Map<string, TestTenant>();

beforeAll(async () => {
  system = await startSystem({ withReceivables: true, withBooklets: true, env: { CALLBACK_POLL_INTERVAL_MS: '50' } });
  receiver = await new CallbackReceiver().start();
  for (const company of companies) {
    const tenant = await system.newTenant(`Tenant ${company.label}`);
    tenants.set(company.label, tenant);
    await setProviderAccount(system.databaseUrl, [
      ...['--tenant', tenant.tenantId, '--provider', 'sandbox'],
      ...['--beneficiary-name', company.name, '--beneficiary-tax-id', company.taxId],
      ...['--beneficiary-city', company.city, '--pix-key', company.pixKey],
    ]);
  }
}, 60_000);
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

it('slips, BR Codes and booklets name each tenant its own beneficiary, never the other', async () => {
  // Both tenants issue two installments of one booklet each, at the same moment.
  const issued = await Promise.all(
    companies.map(async (company) => {
      const tenant = tenants.get(company.label)!;
      const client = clientPayload({ name: `Pagador ${company.label}` });
      expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
      const slip = randomUUID();
      const items = [0, 1].map((i) =>
        receivablePayload(client.client_id, receiver.url, {
          payment_slip_id: slip,
          payment_method: i === 0 ? 1 : 3,
          due_date: `2027-0${i + 1}-10`,
        }),
      );
      expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
      return { company, tenant, slip, ids: items.map((i) => i.account_receivable_id) };
    }),
  );
  const registeredOf = (id: string) =>
    receivableCallbacks(receiver, id).find((c) => 'type' in c && c.type === 'registered');
  await waitFor(() => issued.every(({ ids }) => ids.every((id) => registeredOf(id))), 30_000, 'registered callbacks');

  for (const { company, ids } of issued) {
    const other = companies.find((c) => c !== company)!;
    for (const id of ids) {
      const registered: RegisteredCallback = asRegistered(registeredOf(id));
      const pix = registered.payment_data.pix_copy_and_paste;
      expect(brCodeProblems(pix)).toEqual([]);
      const code = parseBrCode(pix);
      expect({ name: code.merchantName, city: code.merchantCity, key: code.pixKey }).toEqual({
        name: company.merchantName,
        city: company.merchantCity,
        key: company.pixKey,
      });
      const pdf = await fetch(registered.payment_data.pdf);
      expect(pdf.status).toBe(200);
      const text = (await readPdf(new Uint8Array(await pdf.arrayBuffer()))).pages.join('\n');
      expect(text).toContain(company.name);
      expect(text).toContain(company.taxId);
      expect(text).not.toContain(other.name);
      expect(text).not.toContain(other.taxId);
    }
  }

  // Each booklet's payee is its tenant's beneficiary, as on the slips.
  for (const { tenant, slip } of issued) {
    const res = await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url });
    expect(res.status).toBe(202);
  }
  await waitFor(() => issued.every(({ slip }) => bookletSent(receiver, slip)), 30_000, 'booklet sent callbacks');
  for (const { company, slip } of issued) {
    const other = companies.find((c) => c !== company)!;
    const sent = bookletSent(receiver, slip)!;
    expect(sent.installments).toBe(2);
    const pdf = await fetch(sent.download);
    expect(pdf.status).toBe(200);
    const text = (await readPdf(new Uint8Array(await pdf.arrayBuffer()))).pages.join('\n');
    expect(text).toContain(company.name);
    expect(text).toContain(company.taxId);
    expect(text).not.toContain(other.name);
    expect(text).not.toContain(`Tenant ${company.label}`); // the payee is the beneficiary, not the tenant's name
  }
}, 90_000);
