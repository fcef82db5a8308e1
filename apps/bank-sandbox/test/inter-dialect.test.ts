import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createCertificateAuthority, writeSandboxInterTls } from '@payments/dev-certificates';
import { barcodeProblems, brCodeProblems, typeableLineProblems } from '@payments/test-support/slip-checks';
import { control, startHarness, type Harness } from './harness';
import { InterTestClient, type TestIntegration } from './inter-client';
import {
  cobrancaDetalhada,
  cobrancasResponse,
  emitirBody,
  emitirResponse,
  problema,
  referenceProblems,
  tokenResponse,
  webhookCompleto,
} from './inter-reference';

/**
 * The bank sandbox's Inter Cobrança v3 dialect, spoken over mutual TLS by integrations the sandbox
 * issues, every answer checked against Inter's reference as ./inter-reference.ts transcribes it.
 */

const ca = createCertificateAuthority('Inter sandbox test CA');
const dir = mkdtempSync(join(tmpdir(), 'inter-dialect-'));
let harness: Harness;
const clients: InterTestClient[] = [];

beforeAll(async () => {
  harness = await startHarness({ BANK_SANDBOX_INTER_PORT: '0', ...writeSandboxInterTls(ca, dir, { withCaKey: true }) });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
});

const sandbox = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, json?: unknown) =>
  control(harness.sandbox.url, method, path, json);

async function newIntegration(): Promise<TestIntegration> {
  const answer = await sandbox('POST', '/sandbox/inter/integrations');
  expect(answer.status).toBe(201);
  return answer.body as unknown as TestIntegration;
}

async function loggedIn(scope?: string): Promise<InterTestClient> {
  const client = new InterTestClient(harness.sandbox.inter!.baseUrl, ca.certPem, await newIntegration());
  clients.push(client);
  expect((await client.login(scope)).status).toBe(200);
  return client;
}

async function created(client: InterTestClient, overrides: Record<string, unknown> = {}): Promise<string> {
  const answer = await client.create(
    emitirBody({ seuNumero: `S${Math.random().toString(36).slice(2, 12)}`, ...overrides }),
  );
  expect(answer.status).toBe(200);
  expect(referenceProblems(emitirResponse, answer.body)).toEqual([]);
  return (answer.body as { codigoSolicitacao: string }).codigoSolicitacao;
}

async function consulted(client: InterTestClient, codigo: string) {
  const answer = await client.consult(codigo);
  expect(answer.status).toBe(200);
  expect(referenceProblems(cobrancaDetalhada, answer.body)).toEqual([]);
  return answer.body as {
    cobranca: Record<string, unknown>;
    boleto?: { nossoNumero: string; codigoBarras: string; linhaDigitavel: string };
    pix?: { txid: string; pixCopiaECola: string };
  };
}

function expectProblem(answer: { status: number; body: unknown }, status: number) {
  expect(answer.status).toBe(status);
  expect(referenceProblems(problema, answer.body)).toEqual([]);
  expect((answer.body as { status: number }).status).toBe(status);
}

const fieldsNamed = (answer: { body: unknown }) =>
  ((answer.body as { violacoes?: Array<{ propriedade?: string }> }).violacoes ?? []).map((v) => v.propriedade);

describe('integrations, mutual TLS and OAuth', () => {
  it('POST /sandbox/inter/integrations: credentials, a certificate of the CA, an account and a PIX key of its own', async () => {
    const [one, two] = [await newIntegration(), await newIntegration()];
    for (const integration of [one, two]) {
      expect(Object.keys(integration).sort()).toEqual(
        ['account', 'cert_pem', 'client_id', 'client_secret', 'key_pem', 'pix_key'].sort(),
      );
      expect(integration.account).toMatch(/^[1-9][0-9]*$/); // x-conta-corrente: digits, no leading zero
      expect(new X509Certificate(integration.cert_pem).verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    }
    expect(one.account).not.toBe(two.account);
    expect(one.pix_key).not.toBe(two.pix_key);
    expect(one.client_id).not.toBe(two.client_id);
  });

  it('answers a token (TokenResponse) for the integration`s fixed secret over its own certificate only', async () => {
    const integration = await newIntegration();
    const client = new InterTestClient(harness.sandbox.inter!.baseUrl, ca.certPem, integration);
    clients.push(client);
    const token = await client.login('boleto-cobranca.read');
    expect(token.status).toBe(200);
    expect(referenceProblems(tokenResponse, token.body)).toEqual([]);
    expect(token.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'boleto-cobranca.read' });

    const wrongSecret = new InterTestClient(harness.sandbox.inter!.baseUrl, ca.certPem, {
      ...integration,
      client_secret: 'guessed',
    });
    clients.push(wrongSecret);
    expectProblem(await wrongSecret.login(), 403);

    // Its id and secret presented over another integration's certificate.
    const other = await newIntegration();
    const borrowed = new InterTestClient(harness.sandbox.inter!.baseUrl, ca.certPem, {
      ...integration,
      cert_pem: other.cert_pem,
      key_pem: other.key_pem,
    });
    clients.push(borrowed);
    expectProblem(await borrowed.login(), 403);
  });

  it('refuses the handshake without a client certificate', async () => {
    const anonymous = new Agent({ connect: { ca: ca.certPem } });
    await expect(
      request(`${harness.sandbox.inter!.baseUrl}/oauth/v2/token`, { method: 'POST', dispatcher: anonymous }).then((r) =>
        r.body.text(),
      ),
    ).rejects.toThrow();
    await anonymous.close();
  });

  it('x-conta-corrente: its own account is served, another is 403 Acesso Negado; a read-only token cannot create', async () => {
    const client = await loggedIn();
    const codigo = await created(client);
    expectProblem(await client.call('GET', `/cobranca/v3/cobrancas/${codigo}`, { token: 'not-a-token' }), 401);
    const own = await client.call('GET', `/cobranca/v3/cobrancas/${codigo}`, { account: client.integration.account });
    expect(own.status).toBe(200);
    const other = await client.call('GET', `/cobranca/v3/cobrancas/${codigo}`, { account: '99999999' });
    expectProblem(other, 403);
    expect(other.body).toMatchObject({ title: 'Acesso Negado' });

    const reader = await loggedIn('boleto-cobranca.read');
    expectProblem(await reader.create(emitirBody()), 403);
    // Another integration's charge is not found.
    expectProblem(await reader.consult(codigo), 404);
  });
});

describe('charges', () => {
  it('issues a created charge: A_RECEBER, nossoNumero, a valid barcode and typeable line, PIX with a 26-35 txid', async () => {
    const client = await loggedIn();
    const codigo = await created(client, { valorNominal: 2500, dataVencimento: '2099-12-10' });
    const view = await consulted(client, codigo);
    expect(view.cobranca).toMatchObject({ codigoSolicitacao: codigo, situacao: 'A_RECEBER', valorNominal: 2500 });
    expect(view.boleto?.nossoNumero).toMatch(/^\d{11}$/);
    const boleto = view.boleto!;
    expect(barcodeProblems(boleto.codigoBarras, { amountCents: 250_000, dueDate: '2099-12-10' })).toEqual([]);
    expect(typeableLineProblems(boleto.linhaDigitavel, boleto.codigoBarras)).toEqual([]);
    expect(brCodeProblems(view.pix!.pixCopiaECola)).toEqual([]);
    expect(view.pix!.pixCopiaECola).toContain(client.integration.pix_key);
  });

  it('refuses what the reference refuses (400, violacoes naming Inter`s fields) and stores nothing', async () => {
    const client = await loggedIn();
    const body = emitirBody();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ valorNominal: 2.49 }, 'valorNominal'],
      [{ valorNominal: 100000000 }, 'valorNominal'],
      [{ numDiasAgenda: 61 }, 'numDiasAgenda'],
      [{ seuNumero: '1234567890123456' }, 'seuNumero'],
      [{ mensagem: { linha1: 'x'.repeat(79) } }, 'mensagem.linha1'],
      [{ pagador: { ...(body.pagador as object), uf: undefined } }, 'pagador.uf'],
      [{ pagador: { ...(body.pagador as object), cep: '3011000' } }, 'pagador.cep'],
      [{ pagador: { ...(body.pagador as object), endereco: '' } }, 'pagador.endereco'],
      [{ pagador: { ...(body.pagador as object), cpfCnpj: '52998224700' } }, 'pagador.cpfCnpj'],
      [{ dataVencimento: '2020-01-10' }, 'dataVencimento'],
      [{ multa: { codigo: 'PERCENTUAL' } }, 'multa'],
      [{ formasRecebimento: ['PIX'] }, 'formasRecebimento'],
    ];
    for (const [overrides, field] of cases) {
      const answer = await client.create({ ...body, ...overrides });
      expectProblem(answer, 400);
      expect(fieldsNamed(answer).some((name) => name === field || name?.startsWith(`${field}.`))).toBe(true);
    }
    const stored = await sandbox('GET', `/sandbox/inter/charges?client_id=${client.integration.client_id}`);
    expect(stored.body.charges).toEqual([]);
  });

  it('keeps the 30-minute duplicate window: same seuNumero, value, due date and payer is refused', async () => {
    const client = await loggedIn();
    const body = emitirBody({ seuNumero: 'DUP-1' });
    expect((await client.create(body)).status).toBe(200);
    const again = await client.create(body);
    expectProblem(again, 400);
    // Any of the four fields different: another charge.
    expect((await client.create({ ...body, valorNominal: 2501 })).status).toBe(200);
    expect((await client.create({ ...body, seuNumero: 'DUP-2' })).status).toBe(200);
    const stored = await sandbox('GET', `/sandbox/inter/charges?client_id=${client.integration.client_id}`);
    expect((stored.body.charges as unknown[]).length).toBe(3);
  });

  it('an account without a PIX key issues boletos without PIX (no pix object)', async () => {
    const client = await loggedIn();
    const holder = await sandbox('PUT', `/sandbox/inter/clients/${client.integration.client_id}/holder`, {
      name: 'Escola Sem Pix',
      tax_id: '45.723.174/0001-10',
      city: 'Recife',
      pix_key: null,
    });
    expect(holder.status).toBe(200);
    const view = await consulted(client, await created(client));
    expect(view.boleto?.nossoNumero).toMatch(/^\d{11}$/);
    expect(view.pix).toBeUndefined();
  });

  it('lists by due date, issue date or payment date, by situacao, ordered and paged as asked', async () => {
    const client = await loggedIn();
    const codigos = [
      await created(client, { valorNominal: 10, dataVencimento: '2099-03-01' }),
      await created(client, { valorNominal: 30, dataVencimento: '2099-03-02' }),
      await created(client, { valorNominal: 20, dataVencimento: '2099-03-03' }),
    ];
    const paid = await sandbox('POST', `/sandbox/charges/${codigos[1]}/pay`, { method: 'boleto', amount: 29.5 });
    expect(paid.status).toBe(200);
    const list = async (query: string) => {
      const answer = await client.call('GET', `/cobranca/v3/cobrancas?${query}`);
      expect(answer.status).toBe(200);
      expect(referenceProblems(cobrancasResponse, answer.body)).toEqual([]);
      return answer.body as {
        totalPaginas: number;
        totalElementos: number;
        numeroDeElementos: number;
        primeiraPagina: boolean;
        ultimaPagina: boolean;
        cobrancas: Array<{ cobranca: Record<string, unknown> }>;
      };
    };
    const byDue = await list('dataInicial=2099-03-01&dataFinal=2099-03-31&ordenarPor=VALOR&tipoOrdenacao=DESC');
    expect(byDue.cobrancas.map((c) => c.cobranca.valorNominal)).toEqual(['30.00', '20.00', '10.00']);

    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date());
    const byPayment = await list(`dataInicial=${today}&dataFinal=${today}&filtrarDataPor=PAGAMENTO`);
    expect(byPayment.cobrancas.map((c) => c.cobranca)).toEqual([
      expect.objectContaining({ codigoSolicitacao: codigos[1], situacao: 'RECEBIDO', valorTotalRecebido: '29.50' }),
    ]);
    const byIssue = await list(`dataInicial=${today}&dataFinal=${today}&filtrarDataPor=EMISSAO&situacao=A_RECEBER`);
    expect(byIssue.totalElementos).toBe(2);

    const firstPage = await list(
      'dataInicial=2099-03-01&dataFinal=2099-03-31&ordenarPor=DATA_VENCIMENTO&paginacao.itensPorPagina=2',
    );
    expect(firstPage).toMatchObject({
      totalPaginas: 2,
      totalElementos: 3,
      numeroDeElementos: 2,
      primeiraPagina: true,
      ultimaPagina: false,
    });
    const secondPage = await list(
      'dataInicial=2099-03-01&dataFinal=2099-03-31&ordenarPor=DATA_VENCIMENTO&paginacao.itensPorPagina=2&paginacao.paginaAtual=1',
    );
    expect(secondPage).toMatchObject({ numeroDeElementos: 1, primeiraPagina: false, ultimaPagina: true });
    expect(secondPage.cobrancas[0].cobranca.codigoSolicitacao).toBe(codigos[2]);

    const bad = await client.call(
      'GET',
      '/cobranca/v3/cobrancas?dataInicial=2099-03-01&dataFinal=2099-03-31&filtrarDataPor=SITUACAO',
    );
    expectProblem(bad, 400);
    expect(fieldsNamed(bad)).toContain('filtrarDataPor');
  });

  it('cancels an open charge (202, CANCELADO with the reason); a paid one is refused with 400', async () => {
    const client = await loggedIn();
    const open = await created(client);
    const cancel = await client.call('POST', `/cobranca/v3/cobrancas/${open}/cancelar`, {
      json: { motivoCancelamento: 'Devedor pagou por outra forma' },
    });
    expect(cancel.status).toBe(202);
    expect((await consulted(client, open)).cobranca).toMatchObject({
      situacao: 'CANCELADO',
      motivoCancelamento: 'Devedor pagou por outra forma',
    });
    const paid = await created(client);
    expect((await sandbox('POST', `/sandbox/charges/${paid}/pay`, { method: 'pix' })).status).toBe(200);
    expectProblem(
      await client.call('POST', `/cobranca/v3/cobrancas/${paid}/cancelar`, { json: { motivoCancelamento: 'x' } }),
      400,
    );
    expectProblem(await client.call('POST', `/cobranca/v3/cobrancas/${open}/cancelar`, { json: {} }), 400);
  });
});

describe('webhook', () => {
  it('GET is 404 until one is set; PUT 204; GET answers it (WebhookCompleto); DELETE 204, then 404', async () => {
    const client = await loggedIn();
    expectProblem(await client.call('GET', '/cobranca/v3/cobrancas/webhook'), 404);
    const put = await client.call('PUT', '/cobranca/v3/cobrancas/webhook', {
      json: { webhookUrl: 'https://erp.example.com/inter/notices' },
    });
    expect(put.status).toBe(204);
    const get = await client.call('GET', '/cobranca/v3/cobrancas/webhook');
    expect(get.status).toBe(200);
    expect(referenceProblems(webhookCompleto, get.body)).toEqual([]);
    expect(get.body).toMatchObject({ webhookUrl: 'https://erp.example.com/inter/notices' });
    expect((await client.call('DELETE', '/cobranca/v3/cobrancas/webhook')).status).toBe(204);
    expectProblem(await client.call('GET', '/cobranca/v3/cobrancas/webhook'), 404);
    expectProblem(await client.call('DELETE', '/cobranca/v3/cobrancas/webhook'), 404);
  });

  it('accepts an http:// URL in development only; otherwise "Deve iniciar obrigatoriamente com https://"', async () => {
    const client = await loggedIn();
    const http = { webhookUrl: 'http://127.0.0.1:1/inter/notices' };
    expect((await client.call('PUT', '/cobranca/v3/cobrancas/webhook', { json: http })).status).toBe(204);
    expectProblem(await client.call('PUT', '/cobranca/v3/cobrancas/webhook', { json: { webhookUrl: 'ftp://x' } }), 400);

    await harness.restart({ BANK_SANDBOX_INTER_HTTP_WEBHOOKS: 'false' });
    try {
      const again = new InterTestClient(harness.sandbox.inter!.baseUrl, ca.certPem, client.integration);
      clients.push(again);
      expect((await again.login()).status).toBe(200);
      const refused = await again.call('PUT', '/cobranca/v3/cobrancas/webhook', { json: http });
      expectProblem(refused, 400);
      expect(fieldsNamed(refused)).toContain('webhookUrl');
    } finally {
      await harness.restart();
    }
  });
});

describe('our numbers across the sandbox and the pay control', () => {
  it('one nossoNumero sequence for every dialect: pay by our_number, codigoSolicitacao or txid, any amount', async () => {
    const [one, two] = [await loggedIn(), await loggedIn()];
    const interCodigos = [await created(one), await created(two), await created(one)];
    const plain = await fetch(`${harness.sandbox.url}/v1/charges`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sandbox-api-key',
        'content-type': 'application/json',
        'idempotency-key': `k-${Date.now()}`,
      },
      body: JSON.stringify({
        kind: 'hybrid_slip',
        amount_cents: 12_345,
        issue_date: '2025-06-01',
        due_date: '2099-07-10',
        payer: {
          name: 'Maria da Silva',
          tax_id: '529.982.247-25',
          address: 'Av. Paulista, 1000',
          city: 'São Paulo',
          state: 'SP',
          zip_code: '01310-100',
        },
        instructions: [],
        description_lines: [],
      }),
    });
    expect(plain.status).toBe(201);
    const plainNumber = ((await plain.json()) as { our_number: string }).our_number;
    const views = [
      await consulted(one, interCodigos[0]),
      await consulted(two, interCodigos[1]),
      await consulted(one, interCodigos[2]),
    ];
    const numbers = [...views.map((v) => v.boleto!.nossoNumero), plainNumber];
    expect(new Set(numbers).size).toBe(4);

    // By nossoNumero (unpadded too), below the amount due.
    const byNumber = await sandbox('POST', `/sandbox/charges/${String(Number(numbers[0]))}/pay`, {
      method: 'boleto',
      amount: 2000,
    });
    expect(byNumber.status).toBe(200);
    expect((byNumber.body as { cobranca: Record<string, unknown> }).cobranca).toMatchObject({
      codigoSolicitacao: interCodigos[0],
      situacao: 'RECEBIDO',
      valorTotalRecebido: '2000.00',
      origemRecebimento: 'BOLETO',
    });
    // By txid, above it.
    const byTxid = await sandbox('POST', `/sandbox/charges/${views[1].pix!.txid}/pay`, {
      method: 'pix',
      amount: 2600.1,
    });
    expect(byTxid.status).toBe(200);
    expect((byTxid.body as { cobranca: Record<string, unknown> }).cobranca).toMatchObject({
      codigoSolicitacao: interCodigos[1],
      valorTotalRecebido: '2600.10',
      origemRecebimento: 'PIX',
    });
    // By codigoSolicitacao; then again: not open.
    expect((await sandbox('POST', `/sandbox/charges/${interCodigos[2]}/pay`, { method: 'boleto' })).status).toBe(200);
    expect((await sandbox('POST', `/sandbox/charges/${interCodigos[2]}/pay`, { method: 'boleto' })).status).toBe(409);
    // The sandbox's own charge, by its our_number, is the sandbox API's to pay.
    const own = await sandbox('POST', `/sandbox/charges/${plainNumber}/pay`, { method: 'pix' });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ our_number: plainNumber, status: 'paid' });
  });

  it('GET /sandbox/inter/charges answers an integration`s boletos in the consult answer`s shape', async () => {
    const client = await loggedIn();
    const codigo = await created(client);
    const answer = await sandbox('GET', `/sandbox/inter/charges?client_id=${client.integration.client_id}`);
    expect(answer.status).toBe(200);
    const charges = answer.body.charges as unknown[];
    expect(charges).toHaveLength(1);
    expect(referenceProblems(cobrancaDetalhada, charges[0])).toEqual([]);
    expect(charges[0]).toMatchObject({ cobranca: { codigoSolicitacao: codigo } });
  });
});
