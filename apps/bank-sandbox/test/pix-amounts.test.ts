import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, writeSandboxInterTls } from '@payments/dev-certificates';
import { control, startHarness, type Harness } from './harness';
import { PixTestClient, type CobV, type Pix, type PixIntegration } from './pix-client';

/**
 * What the sandbox charges for a cobv on the day it is paid, for the standard's modalities of multa,
 * juros, desconto and abatimento (CobVValor), each expected amount worked out here from the numbers of
 * the case, never by sandbox code: the cobv is created through the PIX API and paid with the pay
 * control on a chosen day (paid_on).
 */

const ca = createCertificateAuthority('PIX amounts test CA');
const dir = mkdtempSync(join(tmpdir(), 'pix-amounts-'));
let harness: Harness;
let client: PixTestClient;
let integration: PixIntegration;

beforeAll(async () => {
  harness = await startHarness({ BANK_SANDBOX_INTER_PORT: '0', ...writeSandboxInterTls(ca, dir, { withCaKey: true }) });
  integration = (await control(harness.sandbox.url, 'POST', '/sandbox/pix/integrations'))
    .body as unknown as PixIntegration;
  client = new PixTestClient(integration.pix_api_url, ca.certPem, integration);
  expect((await client.login(integration.token_url, integration.client_id, integration.client_secret)).status).toBe(
    200,
  );
});
afterAll(async () => {
  await client.close();
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
});

function brasiliaToday(): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date());
}
function plusDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}
/** The first Friday on or after `date`. */
function nextFriday(date: string): string {
  const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
  return plusDays(date, (5 - weekday + 7) % 7);
}
const reais = (cents: number) => (cents / 100).toFixed(2);

let serial = 0;
/** Creates a cobv due `dueDate` with `valor`, pays it on `paidOn`, and answers the pay control. */
async function payOn(dueDate: string, valor: Record<string, unknown>, paidOn: string, validity = 60) {
  serial += 1;
  const txid = `amt${Date.now().toString(36)}${String(serial).padStart(3, '0')}`.padEnd(30, '0');
  const created = await client.call<CobV>('PUT', `/cobv/${txid}`, {
    json: {
      calendario: { dataDeVencimento: dueDate, validadeAposVencimento: validity },
      devedor: { cpf: '12345678909', nome: 'Fulano de Tal' },
      valor,
      chave: integration.pix_key,
    },
  });
  expect(created.status).toBe(201);
  return control(harness.sandbox.url, 'POST', `/sandbox/charges/${txid}/pay`, { method: 'pix', paid_on: paidOn });
}

async function paidAmount(dueDate: string, valor: Record<string, unknown>, paidOn: string): Promise<string> {
  const answer = await payOn(dueDate, valor, paidOn);
  expect(answer.status).toBe(200);
  return (answer.body.pix as Pix[])[0].valor;
}

const due = plusDays(brasiliaToday(), 12);

it('multa fixed (1) and juros percent a calendar day (2): 250.00 + 5.00 + 0.10 % x 7 days', async () => {
  const valor = {
    original: '250.00',
    multa: { modalidade: 1, valorPerc: '5.00' },
    juros: { modalidade: 2, valorPerc: '0.10' },
  };
  const expected = 25_000 + 500 + (25_000 * 0.1 * 7) / 100;
  expect(await paidAmount(due, valor, plusDays(due, 7))).toBe(reais(expected));
});

it('juros percent a month (3), a 30-day month: 300.00 + 3 % x 15/30', async () => {
  const valor = { original: '300.00', juros: { modalidade: 3, valorPerc: '3.00' } };
  const expected = 30_000 + (30_000 * 3 * 15) / 100 / 30;
  expect(await paidAmount(due, valor, plusDays(due, 15))).toBe(reais(expected));
});

it('juros an amount a business day (5): due on a Friday, paid on Monday, one business day late', async () => {
  const friday = nextFriday(plusDays(brasiliaToday(), 1));
  const valor = { original: '100.00', juros: { modalidade: 5, valorPerc: '1.00' } };
  expect(await paidAmount(friday, valor, plusDays(friday, 3))).toBe(reais(10_000 + 100 * 1));
});

it('no multa nor juros on the due date itself', async () => {
  const valor = {
    original: '100.00',
    multa: { modalidade: 2, valorPerc: '2.00' },
    juros: { modalidade: 1, valorPerc: '0.33' },
  };
  expect(await paidAmount(due, valor, due)).toBe('100.00');
});

it('desconto an amount a calendar day early (3): 100.00 - 0.50 x 4 days', async () => {
  const valor = { original: '100.00', desconto: { modalidade: 3, valorPerc: '0.50' } };
  expect(await paidAmount(due, valor, plusDays(due, -4))).toBe(reais(10_000 - 50 * 4));
});

it('desconto percent until dates (2): the first date not yet past applies', async () => {
  const dates = [
    { data: plusDays(due, -10), valorPerc: '10.00' },
    { data: plusDays(due, -3), valorPerc: '5.00' },
  ];
  const valor = { original: '200.00', desconto: { modalidade: 2, descontoDataFixa: dates } };
  expect(await paidAmount(due, valor, plusDays(due, -5))).toBe(reais(20_000 - (20_000 * 5) / 100));
  expect(await paidAmount(due, valor, plusDays(due, -2))).toBe('200.00');
});

it('abatimento percent (2) whenever paid, beside multa and juros after the due date', async () => {
  const valor = {
    original: '100.00',
    abatimento: { modalidade: 2, valorPerc: '10.00' },
    multa: { modalidade: 2, valorPerc: '2.00' },
    juros: { modalidade: 1, valorPerc: '0.20' },
  };
  const expected = 10_000 - (10_000 * 10) / 100 + (10_000 * 2) / 100 + 20 * 1;
  expect(await paidAmount(due, valor, plusDays(due, 1))).toBe(reais(expected));
});

it('is payable up to validadeAposVencimento days after the due date, and not the day after', async () => {
  const valor = { original: '100.00' };
  expect((await payOn(due, valor, plusDays(due, 5), 5)).status).toBe(200);
  expect((await payOn(due, valor, plusDays(due, 6), 5)).status).toBe(409);
});
