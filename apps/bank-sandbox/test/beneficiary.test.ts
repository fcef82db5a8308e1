import { randomUUID } from 'node:crypto';
import { createDatabase } from '@payments/db';
import type { Kysely } from 'kysely';
import { readPdf } from '@payments/test-support/pdf-text';
import { brCodeProblems, crc16CcittFalse, parseBrCode } from '@payments/test-support/slip-checks';
import type { ChargeResponse } from '../src';
import { SCHEMA } from '../src/db/migrations';
import type { BankSandboxDatabase } from '../src/db/schema';
import { merchantField, printedTaxId } from '../src/domain/beneficiary';
import { parseFreeField } from '../src/domain/free-field';
import { eventually, startHarness, type Harness } from './harness';

/**
 * docs/architecture.md, "Each tenant is paid into its own account", as the sandbox's native API serves it: each
 * charge is issued for the beneficiary it is given (slip PDF, BR Code, barcode), and its payment
 * webhook names the caller's account.
 */
let h: Harness;
let db: Kysely<BankSandboxDatabase>;

beforeAll(async () => {
  h = await startHarness();
  db = createDatabase<BankSandboxDatabase>({ url: h.databaseUrl, schema: SCHEMA });
});
afterAll(async () => {
  await db?.destroy();
  await h?.close();
});

async function call(method: string, path: string, opts: { body?: unknown; auth?: boolean; key?: string } = {}) {
  const headers: Record<string, string> = { 'idempotency-key': opts.key ?? randomUUID() };
  if (opts.auth !== false) headers.authorization = 'Bearer sandbox-api-key';
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${h.sandbox.url}${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const type = response.headers.get('content-type') ?? '';
  const body: unknown = type.includes('json') ? await response.json() : Buffer.from(await response.arrayBuffer());
  return { status: response.status, body };
}

function chargeBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'hybrid_slip',
    amount_cents: 25_000,
    issue_date: '2026-03-01',
    due_date: '2026-03-20',
    payer: { name: 'Maria da Silva', tax_id: '529.982.247-25' },
    ...extra,
  };
}

async function pdfText(charge: ChargeResponse): Promise<string> {
  const pdf = await fetch(charge.pdf_url);
  expect(pdf.status).toBe(200);
  return (await readPdf(new Uint8Array(await pdf.arrayBuffer()))).pages.join('\n');
}

async function chargeCount(): Promise<number> {
  const row = await db
    .selectFrom('charges')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const butcher = {
  name: 'Açougue Irmãos Ferreira Comércio de Carnes Ltda',
  tax_id: '12345678000195',
  city: 'Itapecerica da Serra',
  pix_key: 'financeiro@acougue-ferreira.com.br',
  agency: '0341',
  account: '12345-6',
  address: 'Rua das Flores, 10',
};
const association = {
  name: 'Associação dos Moradores do Bairro Alto',
  tax_id: '111.444.777-35',
  agency: '123456',
  account: '98-7',
};

describe('charges issued for the beneficiary they are given', () => {
  let a: ChargeResponse;
  let b: ChargeResponse;
  const referenceA = randomUUID().toUpperCase();
  const referenceB = randomUUID();

  beforeAll(async () => {
    // One through the single endpoint, one through the batch: both paths carry the beneficiary.
    const single = await call('POST', '/v1/charges', {
      body: chargeBody({ beneficiary: butcher, account_reference: referenceA }),
    });
    expect(single.status).toBe(201);
    a = single.body as ChargeResponse;
    const batch = await call('POST', '/v1/charges/batch', {
      body: {
        charges: [
          {
            idempotency_key: randomUUID(),
            ...chargeBody({ beneficiary: association, account_reference: referenceB }),
          },
        ],
      },
    });
    expect(batch.status).toBe(200);
    const [result] = (batch.body as { results: Array<{ status: number; charge: ChargeResponse }> }).results;
    expect(result.status).toBe(201);
    b = result.charge;
  });

  it('answers with the beneficiary and account reference as given', () => {
    expect(a).toMatchObject({ account_reference: referenceA, beneficiary: butcher });
    expect(b).toMatchObject({
      account_reference: referenceB,
      beneficiary: { ...association, city: null, pix_key: null, address: null },
    });
  });

  it("prints each slip's own beneficiary and CNPJ/CPF, never the other's", async () => {
    const [textA, textB] = [await pdfText(a), await pdfText(b)];
    expect(textA).toContain(butcher.name);
    expect(textA).toContain('CNPJ 12.345.678/0001-95');
    expect(textA).toContain(butcher.address);
    expect(textA).toContain('0341 / 12345-6');
    expect(textB).toContain(association.name);
    expect(textB).toContain('CPF 111.444.777-35');
    expect(textB).toContain('123456 / 98-7');
    for (const text of [textA, textB]) expect(text).not.toContain('Payments Sandbox Ltda');
    expect(textA).not.toContain(association.name);
    expect(textA).not.toContain('111.444.777-35');
    expect(textB).not.toContain(butcher.name);
    expect(textB).not.toContain('12.345.678/0001-95');
  });

  it("puts each charge's own name, city and PIX key in its BR Code, with a valid CRC", () => {
    for (const charge of [a, b]) {
      expect(brCodeProblems(charge.pix_copy_and_paste)).toEqual([]);
      const crc = charge.pix_copy_and_paste.slice(-4);
      expect(crc).toBe(crc16CcittFalse(charge.pix_copy_and_paste.slice(0, -4)));
    }
    const codeA = parseBrCode(a.pix_copy_and_paste);
    expect(codeA.fields['59']).toBe('ACOUGUE IRMAOS FERREIRA C'); // folded, cut to 25
    expect(codeA.fields['60']).toBe('ITAPECERICA DA'); // cut to 15 ("ITAPECERICA DA "), no trailing space
    expect(codeA.templates['26']).toEqual({ '00': 'br.gov.bcb.pix', '01': butcher.pix_key });
    const codeB = parseBrCode(b.pix_copy_and_paste);
    expect(codeB.fields['59']).toBe('ASSOCIACAO DOS MORADORES'); // 25th character was a space
    expect(codeB.fields['60']).toBe(h.config.account.pix.merchantCity); // no city given: the sandbox's
    expect(codeB.templates['26']['01']).toBe(h.config.account.pix.key); // no key given: the sandbox's
  });

  it("puts the beneficiary's agency and account in the barcode when they fit, else the sandbox's", () => {
    expect(parseFreeField(a.barcode!.slice(19))).toMatchObject({ agency: '0341', account: '0123456' });
    // Agency "123456" has six digits: the sandbox's agency; account "98-7" is 987, zero-padded.
    expect(parseFreeField(b.barcode!.slice(19))).toMatchObject({
      agency: h.config.account.agency,
      account: '0000987',
    });
  });

  it('numbers charges sandbox-wide, so the pay control finds each one, and the webhook names its account', async () => {
    expect(a.our_number).not.toBe(b.our_number);
    const paid = await call('POST', `/sandbox/charges/${a.our_number}/pay`, { body: { method: 'pix' }, auth: false });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ charge_id: a.charge_id, status: 'paid' });
    const [delivery] = await eventually(() => {
      const found = h.receiver.deliveriesFor(a.our_number);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(JSON.parse(delivery.body)).toMatchObject({
      event: 'charge.paid',
      charge_id: a.charge_id,
      our_number: a.our_number,
      account_reference: referenceA, // exactly as given, upper case included
    });
  });

  it('GET /v1/charges/{charge_id} answers a paid charge with its payment, an open one without', async () => {
    await eventually(async () => {
      const read = await call('GET', `/v1/charges/${a.charge_id}`);
      expect(read.status).toBe(200);
      const charge = read.body as ChargeResponse;
      expect(charge).toMatchObject({
        charge_id: a.charge_id,
        status: 'paid',
        amount_paid_cents: 25_000,
        fee_cents: 248, // 0.99 % of R$ 250.00, half-up
        method: 'pix',
        account_reference: referenceA,
        beneficiary: butcher,
      });
      expect(new Date(charge.paid_at!).toISOString()).toBe(charge.paid_at);
    });
    expect((await call('GET', `/v1/charges/${b.charge_id.toUpperCase()}`)).body).toMatchObject({
      charge_id: b.charge_id,
      status: 'registered',
      paid_at: null,
      amount_paid_cents: null,
      fee_cents: null,
      method: null,
    });
    expect((await call('GET', `/v1/charges/${a.charge_id}`, { auth: false })).status).toBe(401);
  });
});

it('prints the CNPJ and address under a name too long for one line', async () => {
  const name = `Companhia ${'Muito '.repeat(40)}Comprida Ltda`.slice(0, 255);
  const res = await call('POST', '/v1/charges', { body: chargeBody({ beneficiary: { ...butcher, name } }) });
  expect(res.status).toBe(201);
  const text = await pdfText(res.body as ChargeResponse);
  expect(text).toContain('Companhia Muito Muito');
  expect(text).toContain('CNPJ 12.345.678/0001-95 - Rua das Flores, 10');
  expect(text).not.toContain(name);
});

describe('without a beneficiary', () => {
  it("issues for the sandbox's configured payee and PIX receiver, and the webhook's account_reference is null", async () => {
    const res = await call('POST', '/v1/charges', { body: chargeBody() });
    expect(res.status).toBe(201);
    const charge = res.body as ChargeResponse;
    expect(charge).toMatchObject({ beneficiary: null, account_reference: null });
    const code = parseBrCode(charge.pix_copy_and_paste);
    expect([code.merchantName, code.merchantCity, code.pixKey]).toEqual([
      h.config.account.pix.merchantName,
      h.config.account.pix.merchantCity,
      h.config.account.pix.key,
    ]);
    const text = await pdfText(charge);
    expect(text).toContain(h.config.payee.name);
    expect(text).toContain(printedTaxId(h.config.payee.taxId));
    expect(parseFreeField(charge.barcode!.slice(19))).toMatchObject({
      agency: h.config.account.agency,
      account: h.config.account.account,
    });

    await call('POST', `/sandbox/charges/${charge.our_number}/pay`, { body: { method: 'manual' }, auth: false });
    const [delivery] = await eventually(() => {
      const found = h.receiver.deliveriesFor(charge.our_number);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(JSON.parse(delivery.body)).toMatchObject({ charge_id: charge.charge_id, account_reference: null });
  });
});

describe('bad beneficiary or account reference', () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['an empty name', '/beneficiary/name', { beneficiary: { ...association, name: '' } }],
    ['a blank name', '/beneficiary/name', { beneficiary: { ...association, name: '   ' } }],
    ['a name over 255', '/beneficiary/name', { beneficiary: { ...association, name: 'a'.repeat(256) } }],
    ['a name with nothing in ASCII', '/beneficiary/name', { beneficiary: { ...association, name: '株式会社' } }],
    ['a name with U+0000', '/beneficiary/name', { beneficiary: { ...association, name: 'Ana\u0000' } }],
    ['no name', '/beneficiary/name', { beneficiary: { tax_id: association.tax_id } }],
    ['a wrong check digit', '/beneficiary/tax_id', { beneficiary: { ...association, tax_id: '111.444.777-36' } }],
    ['no tax id', '/beneficiary/tax_id', { beneficiary: { name: 'Ana' } }],
    ['a city with nothing in ASCII', '/beneficiary/city', { beneficiary: { ...association, city: '東京' } }],
    ['a PIX key that is none', '/beneficiary/pix_key', { beneficiary: { ...association, pix_key: 'not a key' } }],
    ['a landline as PIX key', '/beneficiary/pix_key', { beneficiary: { ...association, pix_key: '+551133334444' } }],
    ['a beneficiary that is a string', '/beneficiary', { beneficiary: 'Ana' }],
    ['an account reference over 64', '/account_reference', { account_reference: 'x'.repeat(65) }],
    ['an account reference with a space', '/account_reference', { account_reference: 'acct 1' }],
    ['an empty account reference', '/account_reference', { account_reference: '' }],
  ];

  it.each(cases)('refuses %s with 422 naming %s, and stores nothing', async (_, path, extra) => {
    const before = await chargeCount();
    const res = await call('POST', '/v1/charges', { body: chargeBody(extra) });
    expect(res.status).toBe(422);
    const error = (res.body as { error: { code: string; message: string; details: Array<{ path: string }> } }).error;
    expect(error.code).toBe('invalid_request');
    expect(error.details.map((d) => d.path)).toContain(path);
    expect(error.message).toContain(path);

    const batch = await call('POST', '/v1/charges/batch', {
      body: { charges: [{ idempotency_key: randomUUID(), ...chargeBody(extra) }] },
    });
    const [result] = (batch.body as { results: Array<{ status: number; error: { message: string } }> }).results;
    expect(result.status).toBe(422);
    expect(result.error.message).toContain(path);
    expect(await chargeCount()).toBe(before);
  });

  it('treats the same Idempotency-Key with another beneficiary as another request', async () => {
    const key = randomUUID();
    expect((await call('POST', '/v1/charges', { key, body: chargeBody({ beneficiary: butcher }) })).status).toBe(201);
    const other = await call('POST', '/v1/charges', { key, body: chargeBody({ beneficiary: association }) });
    expect(other.status).toBe(422);
    expect((other.body as { error: { code: string } }).error.code).toBe('idempotency_key_reused');
  });
});

describe('BR Code text of a beneficiary', () => {
  it('folds accents to upper-case ASCII and cuts without leaving a trailing space', () => {
    expect(merchantField('Padaria Pão de Açúcar', 25)).toBe('PADARIA PAO DE ACUCAR');
    expect(merchantField('Açougue Irmãos Ferreira Comércio de Carnes Ltda', 25)).toBe('ACOUGUE IRMAOS FERREIRA C');
    expect(merchantField('Associação dos Moradores do Bairro Alto', 25)).toBe('ASSOCIACAO DOS MORADORES');
    expect(merchantField('Itapecerica da Serra', 15)).toBe('ITAPECERICA DA');
    expect(merchantField('  São Paulo  ', 15)).toBe('SAO PAULO');
    expect(merchantField('株式会社', 25)).toBe('');
  });

  it('prints CPF and CNPJ with their punctuation, however they were given', () => {
    expect(printedTaxId('12345678000195')).toBe('CNPJ 12.345.678/0001-95');
    expect(printedTaxId('12.345.678/0001-95')).toBe('CNPJ 12.345.678/0001-95');
    expect(printedTaxId('11144477735')).toBe('CPF 111.444.777-35');
  });
});
