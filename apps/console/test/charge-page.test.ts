import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startConsole, type ConsoleUnderTest } from './support/console-under-test';
import { SessionStandIn } from './support/session-stand-in';

/**
 * The charge page and the language switch, in-process against a stand-in gateway on a local port:
 * pt-BR by default (R$, Brasília time, "Pago em" with payment_date unshifted), English with the
 * `lang` cookie, the payment data or "aguardando registro no banco", and the slip PDF and QR image
 * streamed from the gateway's signed links only.
 */
const TENANT = '7f0c1a52-0000-4000-8000-000000000001';
const CHARGE = '9b2d7e10-0000-4000-8000-000000000002';
const UNREGISTERED = '9b2d7e10-0000-4000-8000-000000000003';
const XSS = '<img src=x onerror=alert(1)>';
const TYPEABLE = '23790448095616862379336011058009740430000124020';
// Due-date factor 1404 (digits 6-9): factor 1000 is 2025-02-22, so 1404 is 404 days later, 2026-04-02.
const BARCODE = '23797140400001234560448056168623793601105800';
const PIX = `00020126450014br.gov.bcb.pix${XSS}6304F170`;
const PDF_BYTES = Buffer.from('%PDF-1.4 a slip');
const PNG_BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function fakeJwt(sub: string): string {
  const iat = Math.floor(Date.now() / 1000);
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'EdDSA' })}.${part({ sub, iat, exp: iat + 3600 })}.${randomBytes(16).toString('base64url')}`;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let gateway: Server;
let gatewayUrl: string;
let routes: Record<string, Handler>;
let fetched: string[];
let console_: ConsoleUnderTest;
let base: string;
let cookie: string;

function json(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(JSON.stringify(body));
}

const notFound: Handler = (_req, res) =>
  json(res, 404, { title: 'Not Found', status: 404, detail: 'not registered' }, 'application/problem+json');

function paymentData(links: { pdf: string; qrcode_image: string }) {
  return {
    typeable_line: TYPEABLE,
    barcode: BARCODE,
    our_number: '00000123',
    pix_copy_and_paste: PIX,
    ...links,
  };
}

/** Signed gateway links as the gateway writes them (another host: the console re-bases them). */
const SIGNED = {
  pdf: `https://gateway.example/api/v1/bank-slips/downloads/${CHARGE}?expires=1999999999&signature=abc`,
  qrcode_image: `https://gateway.example/api/v1/bank-slips/qrcodes/${CHARGE}?expires=1999999999&signature=def`,
};

beforeAll(async () => {
  gateway = createServer((req, res) => {
    fetched.push(req.url ?? '');
    const route = routes[`${req.method} ${req.url?.split('?')[0]}`];
    if (route) return route(req, res);
    notFound(req, res);
  });
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  console_ = await startConsole(gatewayUrl);
  base = console_.url;
});

beforeEach(async () => {
  fetched = [];
  const charge = (id: string, paid: boolean) => ({
    accounts_receivable_id: id,
    client_name: `Padaria ${XSS}`,
    status_payment: paid ? 'Aprovada' : 'Pendente',
    payment_date: paid ? '2026-11-23T16:23:51.669' : null,
    amount_due: 1234.56,
    amount_paid: paid ? 1234.56 : 0,
    fee_amount: paid ? 0.89 : 0,
    payment_type: paid ? 'Pix' : 'naodefinido',
  });
  const issued = (id: string) => ({
    accounts_receivable_id: id,
    client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60',
    payment_slip_id: 'c4a1e6f2-8b3d-4f7a-a2c5-6d9e0f1b2a3c',
    payment_method: 1,
    status_payment: 'Pendente',
    value: 1234.56,
    emission_date: '2026-03-20',
    due_date: '2026-04-02',
    payer: { name: `Padaria ${XSS}`, tax_id: '11222333000181' },
  });
  const history = {
    items: [
      { at: '2026-11-23T12:00:01.204Z', from_state: null, to_state: 'pending', reason: 'received' },
      { at: '2026-11-23T19:23:52.000Z', from_state: 'pending', to_state: 'approved', reason: 'paid by pix' },
    ],
  };
  routes = {
    ...new SessionStandIn(TENANT).routes(),
    'POST /api/v1/authenticate': (_req, res) =>
      json(res, 200, { access_token: fakeJwt(TENANT), token_type: 'Bearer', expires_in: 3600 }),
    [`POST /api/v1/accounts-receivable/${CHARGE}/consult-transaction`]: (_req, res) =>
      json(res, 200, charge(CHARGE, true)),
    [`POST /api/v1/accounts-receivable/${UNREGISTERED}/consult-transaction`]: (_req, res) =>
      json(res, 200, charge(UNREGISTERED, false)),
    [`GET /api/v1/accounts-receivable/${CHARGE}/history`]: (_req, res) => json(res, 200, history),
    [`GET /api/v1/accounts-receivable/${CHARGE}`]: (_req, res) => json(res, 200, issued(CHARGE)),
    [`GET /api/v1/accounts-receivable/${UNREGISTERED}`]: (_req, res) => json(res, 200, issued(UNREGISTERED)),
    [`GET /api/v1/accounts-receivable/${UNREGISTERED}/history`]: (_req, res) =>
      json(res, 200, { items: history.items.slice(0, 1) }),
    'GET /api/v1/callbacks': (_req, res) => json(res, 200, []),
    [`GET /api/v1/accounts-receivable/${CHARGE}/payment-data`]: (_req, res) => json(res, 200, paymentData(SIGNED)),
    [`GET /api/v1/bank-slips/downloads/${CHARGE}`]: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(PDF_BYTES.length) });
      res.end(PDF_BYTES);
    },
    [`GET /api/v1/bank-slips/qrcodes/${CHARGE}`]: (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(PNG_BYTES);
    },
  };
  const login = await fetch(`${base}/login/tenant`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams({ token: 'itk_good' }).toString(),
  });
  expect(login.status).toBe(302);
  cookie = (login.headers.getSetCookie().find((c) => c.startsWith('console_session=')) ?? '').split(';')[0] ?? '';
});

afterAll(async () => {
  gateway.closeAllConnections();
  await console_.close();
  await new Promise((r) => gateway.close(r));
});

async function page(path: string, lang?: string): Promise<{ status: number; html: string }> {
  const res = await fetch(`${base}${path}`, { headers: { cookie: lang ? `${cookie}; lang=${lang}` : cookie } });
  return { status: res.status, html: await res.text() };
}

/** The text of the <dd id="..."> of a fact (tags stripped). */
function fact(html: string, id: string): string | undefined {
  const m = new RegExp(`<dd id="${id}">([\\s\\S]*?)</dd>`).exec(html);
  return m?.[1]?.replace(/<[^>]+>/g, '');
}

describe('the charge page in pt-BR (the default)', () => {
  it('shows the amount in R$, "Pago em" in Brasília time unshifted, and the payment data', async () => {
    const { status, html } = await page(`/tenant/charges/${CHARGE}`);
    expect(status).toBe(200);
    expect(html).toContain('<html lang="pt-BR">');
    expect(fact(html, 'amount-due')).toBe('R$ 1.234,56');
    expect(html).toContain('<dt>Pago em</dt><dd id="paid-on">23/11/2026 16:23 (horário de Brasília)</dd>');
    expect(fact(html, 'paid-with')).toBe('Pix');
    expect(fact(html, 'fee')).toBe('R$ 0,89');
    expect(fact(html, 'charge-state')).toBe('Aprovada');
    expect(fact(html, 'due-date')).toBe('02/04/2026');
    expect(fact(html, 'payer-tax-id')).toBe('11.222.333/0001-81');
    expect(fact(html, 'our-number')).toBe('00000123');
    expect(fact(html, 'typeable-line')).toBe('23790.44809 56168.623793 36011.058009 7 40430000124020');
    expect(fact(html, 'barcode')).toBe(BARCODE);
    // The history's instants are UTC: 19:23:52Z is 16:23 in Brasília.
    expect(html).toContain('<td>23/11/2026 16:23 (horário de Brasília)</td>');
    expect(html).toContain('<img src="/tenant/charges/9b2d7e10-0000-4000-8000-000000000002/qrcode.png"');
    expect(html).toContain(`<a href="/tenant/charges/${CHARGE}/slip.pdf" id="slip-pdf">Baixar o PDF</a>`);
  });

  it('keeps a payer name and a PIX code as text', async () => {
    const { html } = await page(`/tenant/charges/${CHARGE}`);
    expect(html).not.toContain(XSS);
    expect(fact(html, 'payer-name')).toBe('Padaria &lt;img src=x onerror=alert(1)>');
    expect(html).toContain('00020126450014br.gov.bcb.pix&lt;img src=x onerror=alert(1)>6304F170</textarea>');
  });

  it('says the charge awaits registration while payment-data is a 404, and that it is unpaid', async () => {
    const { status, html } = await page(`/tenant/charges/${UNREGISTERED}`);
    expect(status).toBe(200);
    expect(html).toContain('Aguardando registro no banco');
    expect(html).toContain('Ainda não paga.');
    expect(html).not.toContain('id="typeable-line"');
    expect(fact(html, 'charge-state')).toBe('Pendente');
  });
});

it('a charge the bank refused says so instead of awaiting registration', async () => {
  routes[`POST /api/v1/accounts-receivable/${UNREGISTERED}/consult-transaction`] = (_req, res) =>
    json(res, 200, {
      accounts_receivable_id: UNREGISTERED,
      client_name: 'Padaria',
      status_payment: 'Rejeitada',
      payment_date: null,
      amount_due: 10,
      amount_paid: 0,
      fee_amount: 0,
      payment_type: 'naodefinido',
    });
  const { html } = await page(`/tenant/charges/${UNREGISTERED}`);
  expect(html).toContain('O banco recusou o registro desta cobrança');
  expect(html).not.toContain('Aguardando registro no banco');
});

describe('English on request', () => {
  it('with lang=en the same page is in English, still in Brasília time', async () => {
    const { html } = await page(`/tenant/charges/${CHARGE}`, 'en');
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('<dt>Paid on</dt><dd id="paid-on">11/23/2026 4:23 PM (Brasília time)</dd>');
    expect(fact(html, 'amount-due')).toBe('R$1,234.56');
    expect(fact(html, 'charge-state')).toBe('Paid');
    expect(html).toContain('>Português</a>');
  });

  it('GET /lang sets the cookie for a year and returns to a console path only', async () => {
    const back = `/tenant/charges/${CHARGE}`;
    const res = await fetch(`${base}/lang?to=en&back=${encodeURIComponent(back)}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(back);
    expect(res.headers.getSetCookie()).toEqual([expect.stringMatching(/^lang=en; Path=\/; .*Max-Age=31536000/)]);
    const away = await fetch(`${base}/lang?to=pt-BR&back=${encodeURIComponent('//evil.example/x')}`, {
      redirect: 'manual',
    });
    expect(away.headers.get('location')).toBe('/');
    const unknown = await fetch(`${base}/lang?to=fr&back=/login`, { redirect: 'manual' });
    expect(unknown.headers.getSetCookie()).toEqual([]);
  });

  it('an unknown lang cookie is pt-BR', async () => {
    const { html } = await page(`/tenant/charges/${CHARGE}`, 'fr');
    expect(html).toContain('<html lang="pt-BR">');
  });
});

describe('the slip PDF and QR image', () => {
  it("are streamed from the gateway's signed links, re-based on GATEWAY_URL", async () => {
    const pdf = await fetch(`${base}/tenant/charges/${CHARGE}/slip.pdf`, { headers: { cookie } });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toBe(`attachment; filename="boleto-${CHARGE}.pdf"`);
    expect(Buffer.from(await pdf.arrayBuffer())).toEqual(PDF_BYTES);
    expect(fetched).toContain(`/api/v1/bank-slips/downloads/${CHARGE}?expires=1999999999&signature=abc`);

    const png = await fetch(`${base}/tenant/charges/${CHARGE}/qrcode.png`, { headers: { cookie } });
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await png.arrayBuffer())).toEqual(PNG_BYTES);
  });

  it("a bank's own link is linked to on the page, never fetched by the console", async () => {
    const atBank = { pdf: 'https://bank.example/slip.pdf', qrcode_image: 'https://bank.example/qr.png' };
    routes[`GET /api/v1/accounts-receivable/${CHARGE}/payment-data`] = (_req, res) =>
      json(res, 200, paymentData(atBank));
    const { html } = await page(`/tenant/charges/${CHARGE}`);
    expect(html).toContain('<a href="https://bank.example/slip.pdf" rel="noopener noreferrer" id="slip-pdf">');
    expect(html).toContain('<a href="https://bank.example/qr.png" rel="noopener noreferrer" id="qr-code-link">');
    const pdf = await fetch(`${base}/tenant/charges/${CHARGE}/slip.pdf`, { headers: { cookie } });
    expect(pdf.status).toBe(404);
    expect(fetched.some((u) => u.startsWith('/api/v1/bank-slips/'))).toBe(false);
  });

  it('an unregistered charge has neither', async () => {
    const res = await fetch(`${base}/tenant/charges/${UNREGISTERED}/qrcode.png`, { headers: { cookie } });
    expect(res.status).toBe(404);
  });
});
