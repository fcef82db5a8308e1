import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startConsole, type ConsoleUnderTest } from './support/console-under-test';
import { SessionStandIn } from './support/session-stand-in';

/**
 * The charges list's filters and its CSV export (docs/console.md, "Pages"), against a stand-in
 * gateway on a local port that answers the search in two pages. The CSV is read back by a parser of
 * this test's own (RFC 4180 with `;`), not by the code that wrote it.
 */
const TENANT = '7f0c1a52-0000-4000-8000-000000000002';

function fakeJwt(sub: string): string {
  const iat = Math.floor(Date.now() / 1000);
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'EdDSA' })}.${part({ sub, iat, exp: iat + 3600 })}.${randomBytes(16).toString('base64url')}`;
}

interface Item {
  accounts_receivable_id: string;
  client_name: string;
  status_payment: string;
  paymento_type: string;
  payment_date: string | null;
  amount_due: number;
  amount_paid: number;
  fee_amount: number;
}

const item = (n: number, over: Partial<Item> = {}): Item => ({
  accounts_receivable_id: `00000000-0000-4000-8000-00000000000${n}`,
  client_name: `Pagador ${n}`,
  status_payment: 'Pendente',
  paymento_type: 'naodefinido',
  payment_date: null,
  amount_due: 10,
  amount_paid: 0,
  fee_amount: 0,
  ...over,
});

const PAGE_1 = [
  item(1, {
    client_name: 'João Conceição',
    status_payment: 'Aprovada',
    paymento_type: 'Pix',
    // São Paulo civil time, no zone: 14:05 in Brasília, whatever the host's zone.
    payment_date: '2026-11-23T14:05:09.123',
    amount_due: 1234.56,
    amount_paid: 1234.56,
    fee_amount: 0.5,
  }),
  item(2, { client_name: 'Silva; Souza & "Filhos"' }),
  item(3, { client_name: '=HYPERLINK("http://x")', amount_due: 9999999999.99 }),
];
const PAGE_2 = [item(4, { client_name: 'Ana\nLinha' }), item(5, { amount_due: 0.07, status_payment: 'Cancelada' })];

let gateway: Server;
let console_: ConsoleUnderTest;
let base: string;
let searches: Array<Record<string, unknown>>;
let secondPage: (res: ServerResponse) => void;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

beforeAll(async () => {
  const sessions = new SessionStandIn(TENANT).routes();
  gateway = createServer((req, res) => {
    const route = `${req.method} ${req.url?.split('?')[0]}`;
    const session = sessions[route];
    if (session) return session(req, res);
    if (route === 'POST /api/v1/authenticate')
      return json(res, 200, { access_token: fakeJwt(TENANT), token_type: 'Bearer', expires_in: 3600 });
    if (route === 'POST /api/v1/accounts-receivable/search') {
      void readJson(req).then((body) => {
        searches.push(body);
        if (body.cursor === undefined) return json(res, 200, PAGE_1, { 'x-next-cursor': 'page-2' });
        if (body.cursor === 'page-2') return secondPage(res);
        json(res, 422, { status: 422, title: 'Unprocessable', detail: 'bad cursor' });
      });
      return;
    }
    json(res, 404, { title: 'Not Found', status: 404, detail: 'no such thing' });
  });
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
  console_ = await startConsole(`http://127.0.0.1:${(gateway.address() as AddressInfo).port}`);
  base = console_.url;
});

beforeEach(() => {
  searches = [];
  secondPage = (res) => json(res, 200, PAGE_2);
});

afterAll(async () => {
  gateway.closeAllConnections();
  await console_.close();
  await new Promise((r) => gateway.close(r));
});

async function tenantCookie(): Promise<string> {
  const res = await fetch(`${base}/login/tenant`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams({ token: 'itk_good' }).toString(),
  });
  expect(res.status).toBe(302);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('console_session='));
  return (cookie ?? '').split(';')[0] ?? '';
}

/** RFC 4180 records with `;` between fields: quoted fields may hold `;`, `""` and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ';') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  expect(field).toBe(''); // every record ends with CRLF
  expect(row).toEqual([]);
  return rows;
}

const FILTERS = 'state=all&from=2026-11-01&to=2026-11-30&payer_name=concei%C3%A7%C3%A3o&payer_tax_id=529.982.247-25';

describe('GET /tenant/charges.csv', () => {
  it('streams every charge of both pages as pt-BR CSV for Excel: BOM, `;`, 1234,56, dd/mm/aaaa', async () => {
    const cookie = await tenantCookie();
    const res = await fetch(`${base}/tenant/charges.csv?${FILTERS}&our_number=00042&value=1.234,56`, {
      headers: { cookie },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="[^"]+\.csv"$/);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = parseCsv(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(3)));
    expect(rows[0]).toEqual([
      'Cobrança',
      'Pagador',
      'Situação',
      'Forma de pagamento',
      'Pago em (horário de Brasília)',
      'Valor',
      'Valor pago',
      'Tarifa',
    ]);
    expect(rows.slice(1)).toEqual([
      [
        '00000000-0000-4000-8000-000000000001',
        'João Conceição',
        'Aprovada',
        'Pix',
        '23/11/2026 14:05',
        '1234,56',
        '1234,56',
        '0,50',
      ],
      [
        '00000000-0000-4000-8000-000000000002',
        'Silva; Souza & "Filhos"',
        'Pendente',
        'não definido',
        '',
        '10,00',
        '0,00',
        '0,00',
      ],
      // A formula is kept as text.
      [
        '00000000-0000-4000-8000-000000000003',
        `'=HYPERLINK("http://x")`,
        'Pendente',
        'não definido',
        '',
        '9999999999,99',
        '0,00',
        '0,00',
      ],
      ['00000000-0000-4000-8000-000000000004', 'Ana\nLinha', 'Pendente', 'não definido', '', '10,00', '0,00', '0,00'],
      ['00000000-0000-4000-8000-000000000005', 'Pagador 5', 'Cancelada', 'não definido', '', '0,07', '0,00', '0,00'],
    ]);
    // Both pages asked with the same filters, the second by the first's cursor.
    const filters = {
      state: 'all',
      start_date: '2026-11-01',
      end_date: '2026-11-30',
      payer_name: 'conceição',
      payer_tax_id: '529.982.247-25',
      our_number: '00042',
      value: 1234.56,
    };
    expect(searches).toEqual([
      { ...filters, limit: expect.any(Number) },
      { ...filters, limit: expect.any(Number), cursor: 'page-2' },
    ]);
  });

  it('cuts the download short when a later page fails, rather than hand over a file that looks whole', async () => {
    secondPage = (res) => json(res, 503, { status: 503, title: 'Service Unavailable', detail: 'down' });
    const cookie = await tenantCookie();
    const res = await fetch(`${base}/tenant/charges.csv?${FILTERS}`, { headers: { cookie } });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it('names a bad amount before the gateway is asked', async () => {
    const cookie = await tenantCookie();
    const res = await fetch(`${base}/tenant/charges.csv?${FILTERS}&value=12,345`, { headers: { cookie } });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('value: um valor em reais');
    expect(searches).toEqual([]);
  });
});

describe('GET /tenant/charges', () => {
  it('keeps the filters in the form, the pager and the export link; shows "Pago em" in Brasília time', async () => {
    const cookie = await tenantCookie();
    const res = await fetch(`${base}/tenant/charges?${FILTERS}&value=1234,56`, { headers: { cookie } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('name="payer_name" value="conceição"');
    expect(html).toContain('name="payer_tax_id" value="529.982.247-25"');
    expect(html).toContain('name="value" value="1234,56"');
    const exportHref = /id="charges-csv"|href="(\/tenant\/charges\.csv\?[^"]*)"/.exec(html);
    const link = /href="(\/tenant\/charges\.csv\?[^"]*)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
    expect(exportHref).not.toBeNull();
    expect(Object.fromEntries(new URLSearchParams(link?.split('?')[1]))).toEqual({
      state: 'all',
      from: '2026-11-01',
      to: '2026-11-30',
      payer_name: 'conceição',
      payer_tax_id: '529.982.247-25',
      value: '1234,56',
    });
    expect(html).toContain('Exportar CSV');
    expect(html).toContain('<th>Pago em</th>');
    expect(html).toContain('23/11/2026 14:05 (horário de Brasília)');
    expect(html).toMatch(/href="\/tenant\/charges\?[^"]*payer_name=concei[^"]*cursor=page-2"/);
    expect(searches).toEqual([
      {
        state: 'all',
        start_date: '2026-11-01',
        end_date: '2026-11-30',
        payer_name: 'conceição',
        payer_tax_id: '529.982.247-25',
        value: 1234.56,
        limit: expect.any(Number),
      },
    ]);
  });
});
