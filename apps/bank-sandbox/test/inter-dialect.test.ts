import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import type { TSchema } from '@sinclair/typebox';
import {
  ChargeList,
  ChargeView,
  CreateChargeResponse,
  ErrorBody,
  PdfResponse,
  TokenResponse,
  WebhookBody,
  interViolations,
  type CreateChargeRequest,
} from '@payments/inter-cobranca';
import * as fixtures from '@payments/inter-cobranca/fixtures';
import {
  createTestCertificateAuthority,
  writeSandboxInterTls,
  type TestCertificate,
} from '@payments/inter-cobranca/test-certificates';
import { barcodeProblems, brCodeProblems, parseBrCode, typeableLineProblems } from '@payments/test-support/slip-checks';
import { readPdf } from '@payments/test-support/pdf-text';
import { eventually, startHarness, type Harness } from './harness';

/**
 * The bank sandbox's Inter Cobrança v3 dialect, spoken over mutual TLS as a client of Inter would, every
 * answer checked against the contract schemas of @payments/inter-cobranca.
 */

const ca = createTestCertificateAuthority('Inter sandbox test CA');
const foreignCa = createTestCertificateAuthority('Someone else');
const dir = mkdtempSync(join(tmpdir(), 'inter-dialect-'));
let harness: Harness;
let baseUrl: string;

beforeAll(async () => {
  harness = await startHarness({ BANK_SANDBOX_INTER_PORT: '0', ...writeSandboxInterTls(ca, dir) });
  baseUrl = harness.sandbox.inter!.baseUrl;
});
afterAll(async () => {
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
});

function expectConforms(schema: TSchema, value: unknown): void {
  expect(interViolations(schema, value)).toEqual([]);
}

/** One Inter API client: its own client_id and certificate. */
class InterTestClient {
  readonly agent: Agent;

  constructor(
    readonly clientId: string,
    readonly identity: TestCertificate,
    readonly secret = 'secret-' + clientId,
  ) {
    this.agent = new Agent({ connect: { ca: ca.certPem, cert: identity.certPem, key: identity.keyPem } });
  }

  async call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    options: { token?: string; json?: unknown; form?: Record<string, string> } = {},
  ): Promise<{ status: number; body: unknown; contentType: string }> {
    const headers: Record<string, string> = {};
    let body: string | undefined;
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    const response = await request(`${baseUrl}${path}`, { method, headers, body, dispatcher: this.agent });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      body: text ? JSON.parse(text) : undefined,
      contentType: String(response.headers['content-type'] ?? ''),
    };
  }

  async token(scope = 'boleto-cobranca.read boleto-cobranca.write'): Promise<string> {
    const answer = await this.call('POST', '/oauth/v2/token', {
      form: { client_id: this.clientId, client_secret: this.secret, grant_type: 'client_credentials', scope },
    });
    expect(answer.status).toBe(200);
    expectConforms(TokenResponse, answer.body);
    return (answer.body as TokenResponse).access_token;
  }

  async create(token: string, overrides: Partial<CreateChargeRequest> = {}): Promise<string> {
    const answer = await this.call('POST', '/cobranca/v3/cobrancas', {
      token,
      json: { ...fixtures.createChargeRequest, ...overrides },
    });
    expect(answer.status).toBe(200);
    expectConforms(CreateChargeResponse, answer.body);
    return (answer.body as CreateChargeResponse).codigoSolicitacao;
  }

  async consult(token: string, codigo: string): Promise<ChargeView> {
    const answer = await this.call('GET', `/cobranca/v3/cobrancas/${codigo}`, { token });
    expect(answer.status).toBe(200);
    expectConforms(ChargeView, answer.body);
    return answer.body as ChargeView;
  }
}

let clientCount = 0;
function newClient(): InterTestClient {
  clientCount += 1;
  const clientId = `client-${clientCount}-${Math.random().toString(36).slice(2, 8)}`;
  return new InterTestClient(clientId, ca.issue({ commonName: clientId, kind: 'client' }));
}

async function control(method: 'GET' | 'POST' | 'PUT', path: string, json?: unknown) {
  const response = await fetch(`${harness.sandbox.url}${path}`, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('mutual TLS and OAuth', () => {
  it('answers a token over mutual TLS: Bearer, 3600 s, the scopes asked', async () => {
    const client = newClient();
    const answer = await client.call('POST', '/oauth/v2/token', {
      form: {
        client_id: client.clientId,
        client_secret: client.secret,
        grant_type: 'client_credentials',
        scope: 'boleto-cobranca.read',
      },
    });
    expect(answer.status).toBe(200);
    expectConforms(TokenResponse, answer.body);
    expect(answer.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'boleto-cobranca.read' });
  });

  it('refuses the handshake without a client certificate, or with one of another CA', async () => {
    const anonymous = new Agent({ connect: { ca: ca.certPem } });
    const foreignIdentity = foreignCa.issue({ commonName: 'intruder', kind: 'client' });
    const foreign = new Agent({
      connect: { ca: ca.certPem, cert: foreignIdentity.certPem, key: foreignIdentity.keyPem },
    });
    for (const dispatcher of [anonymous, foreign]) {
      await expect(
        request(`${baseUrl}/oauth/v2/token`, { method: 'POST', dispatcher }).then((r) => r.body.text()),
      ).rejects.toThrow();
      await dispatcher.close();
    }
  });

  it('keeps the first secret of a client_id: another one is 401 with an Inter error body', async () => {
    const client = newClient();
    await client.token();
    const answer = await client.call('POST', '/oauth/v2/token', {
      form: { client_id: client.clientId, client_secret: 'wrong', grant_type: 'client_credentials', scope: 'x' },
    });
    expect(answer.status).toBe(401);
    expectConforms(ErrorBody, answer.body);
  });

  it('refuses a token request that is not the documented form, naming the field', async () => {
    const client = newClient();
    const answer = await client.call('POST', '/oauth/v2/token', {
      form: { client_id: client.clientId, client_secret: 's', grant_type: 'password', scope: 'x' },
    });
    expect(answer.status).toBe(400);
    expectConforms(ErrorBody, answer.body);
    expect((answer.body as ErrorBody).violacoes?.map((v) => v.propriedade)).toContain('grant_type');
  });

  it('a token acts for its client only, over its certificate only, within its scopes', async () => {
    const owner = newClient();
    const other = newClient();
    const codigo = await owner.create(await owner.token());
    const otherToken = await other.token();
    expect((await other.call('GET', `/cobranca/v3/cobrancas/${codigo}`, { token: otherToken })).status).toBe(404);

    // The owner's token presented over another client's certificate.
    const ownerToken = await owner.token();
    const stolen = await other.call('GET', `/cobranca/v3/cobrancas/${codigo}`, { token: ownerToken });
    expect(stolen.status).toBe(401);
    expectConforms(ErrorBody, stolen.body);

    const readOnly = await owner.token('boleto-cobranca.read');
    const create = await owner.call('POST', '/cobranca/v3/cobrancas', {
      token: readOnly,
      json: fixtures.createChargeRequest,
    });
    expect(create.status).toBe(403);
    expect((await owner.call('GET', `/cobranca/v3/cobrancas/${codigo}`, { token: 'nope' })).status).toBe(401);
  });
});

describe('charges', () => {
  it('issues a created charge: A_RECEBER with nossoNumero, valid barcode, typeable line and BR Code', async () => {
    const client = newClient();
    const token = await client.token();
    const codigo = await client.create(token);
    const view = await client.consult(token, codigo);
    expect(view.cobranca).toMatchObject({
      codigoSolicitacao: codigo,
      seuNumero: fixtures.createChargeRequest.seuNumero,
      situacao: 'A_RECEBER',
      valorNominal: 2500,
      dataVencimento: '2026-12-10',
    });
    expect(view.boleto!.nossoNumero).toMatch(/^\d{11}$/);
    expect(barcodeProblems(view.boleto!.codigoBarras, { amountCents: 250_000, dueDate: '2026-12-10' })).toEqual([]);
    expect(typeableLineProblems(view.boleto!.linhaDigitavel, view.boleto!.codigoBarras)).toEqual([]);
    expect(brCodeProblems(view.pix!.pixCopiaECola)).toEqual([]);
    expect(parseBrCode(view.pix!.pixCopiaECola).fields['54']).toBe('2500.00');
  });

  it('refuses a create that breaks the contract, naming each field, and stores nothing', async () => {
    const client = newClient();
    const token = await client.token();
    const answer = await client.call('POST', '/cobranca/v3/cobrancas', {
      token,
      json: {
        ...fixtures.createChargeRequest,
        seuNumero: '1234567890123456',
        pagador: { ...fixtures.createChargeRequest.pagador, cpfCnpj: '12345678900' },
      },
    });
    expect(answer.status).toBe(400);
    expect(answer.contentType).toContain('application/problem+json');
    expectConforms(ErrorBody, answer.body);
    expect((answer.body as ErrorBody).violacoes?.map((v) => v.propriedade)).toEqual(['seuNumero']);

    const badCpf = await client.call('POST', '/cobranca/v3/cobrancas', {
      token,
      json: {
        ...fixtures.createChargeRequest,
        pagador: { ...fixtures.createChargeRequest.pagador, cpfCnpj: '12345678900' },
      },
    });
    expect(badCpf.status).toBe(400);
    expect((badCpf.body as ErrorBody).violacoes?.map((v) => v.propriedade)).toEqual(['pagador.cpfCnpj']);
    expect((await control('GET', `/sandbox/inter/charges?client_id=${client.clientId}`)).body.charges).toEqual([]);
  });

  it('is asynchronous: EM_PROCESSAMENTO (no slip yet) until the issue delay has passed', async () => {
    const client = newClient();
    const token = await client.token();
    await control('POST', '/sandbox/inter/behaviour', { issue_delay_ms: 300 });
    try {
      const codigo = await client.create(token);
      const early = await client.consult(token, codigo);
      expect(early.cobranca.situacao).toBe('EM_PROCESSAMENTO');
      expect(early.boleto).toBeUndefined();
      await new Promise((r) => setTimeout(r, 350));
      expect((await client.consult(token, codigo)).cobranca.situacao).toBe('A_RECEBER');
    } finally {
      await control('POST', '/sandbox/inter/behaviour', { issue_delay_ms: 0 });
    }
  });

  it('fail_issue_once ends the next charge in FALHA_EMISSAO, without slip data', async () => {
    const client = newClient();
    const token = await client.token();
    await control('POST', '/sandbox/inter/behaviour', { fail_issue_once: true });
    const failed = await client.consult(token, await client.create(token));
    expect(failed.cobranca.situacao).toBe('FALHA_EMISSAO');
    expect(failed.boleto).toBeUndefined();
    expect((await client.consult(token, await client.create(token))).cobranca.situacao).toBe('A_RECEBER');
  });

  it('lists a client`s charges by seuNumero within the due-date window', async () => {
    const client = newClient();
    const token = await client.token();
    const codigo = await client.create(token, { seuNumero: '000000000000777' });
    await client.create(token, { seuNumero: '000000000000778' });
    const list = await client.call(
      'GET',
      '/cobranca/v3/cobrancas?dataInicial=2026-12-10&dataFinal=2026-12-10&filtrarDataPor=VENCIMENTO&seuNumero=000000000000777',
      { token },
    );
    expect(list.status).toBe(200);
    expectConforms(ChargeList, list.body);
    expect((list.body as ChargeList).cobrancas.map((c) => c.cobranca.codigoSolicitacao)).toEqual([codigo]);
    const outside = await client.call(
      'GET',
      '/cobranca/v3/cobrancas?dataInicial=2026-12-11&dataFinal=2026-12-31&seuNumero=000000000000777',
      { token },
    );
    expect((outside.body as ChargeList).cobrancas).toEqual([]);
    const unknownParameter = await client.call(
      'GET',
      '/cobranca/v3/cobrancas?dataInicial=2026-12-10&dataFinal=2026-12-10&foo=1',
      {
        token,
      },
    );
    expect(unknownParameter.status).toBe(400);
  });

  it('cancels an open charge (202, CANCELADO with the reason); a paid one is 409', async () => {
    const client = newClient();
    const token = await client.token();
    const codigo = await client.create(token);
    const cancel = await client.call('POST', `/cobranca/v3/cobrancas/${codigo}/cancelar`, {
      token,
      json: fixtures.cancelRequest,
    });
    expect(cancel.status).toBe(202);
    const cancelled = await client.consult(token, codigo);
    expect(cancelled.cobranca).toMatchObject({ situacao: 'CANCELADO', motivoCancelamento: 'ACERTOS' });
    expect(
      (await client.call('POST', `/cobranca/v3/cobrancas/${codigo}/cancelar`, { token, json: fixtures.cancelRequest }))
        .status,
    ).toBe(202);

    const paid = await client.create(token);
    expect((await control('POST', `/sandbox/charges/${paid}/pay`, { method: 'boleto' })).status).toBe(200);
    const refused = await client.call('POST', `/cobranca/v3/cobrancas/${paid}/cancelar`, {
      token,
      json: fixtures.cancelRequest,
    });
    expect(refused.status).toBe(409);
    expectConforms(ErrorBody, refused.body);
  });

  it('serves the slip PDF as base64, with the account holder as beneficiary', async () => {
    const client = newClient();
    await control('PUT', `/sandbox/inter/clients/${client.clientId}/holder`, {
      name: 'Padaria Pão Quente Ltda',
      tax_id: '11.444.777/0001-61',
      city: 'Curitiba',
      pix_key: '11444777000161',
    });
    const token = await client.token();
    const codigo = await client.create(token);
    const answer = await client.call('GET', `/cobranca/v3/cobrancas/${codigo}/pdf`, { token });
    expect(answer.status).toBe(200);
    expectConforms(PdfResponse, answer.body);
    const pdf = Buffer.from((answer.body as PdfResponse).pdf, 'base64');
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect((await readPdf(pdf)).pages[0]).toContain('Padaria Pão Quente Ltda');
    const brCode = parseBrCode((await client.consult(token, codigo)).pix!.pixCopiaECola);
    expect(brCode.fields['59']).toBe('PADARIA PAO QUENTE LTDA');
    expect(brCode.fields['60']).toBe('CURITIBA');
  });

  it('slow_once_ms stores the charge first and answers late, once', async () => {
    const client = newClient();
    const token = await client.token();
    await control('POST', '/sandbox/inter/behaviour', { slow_once_ms: 600 });
    const started = Date.now();
    const pending = client.create(token, { seuNumero: '000000000000999' });
    await eventually(async () => {
      const charges = (await control('GET', `/sandbox/inter/charges?client_id=${client.clientId}`)).body
        .charges as unknown[];
      expect(charges).toHaveLength(1);
    }, 2_000);
    expect(Date.now() - started).toBeLessThan(600);
    await pending;
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    const quick = Date.now();
    await client.create(token);
    expect(Date.now() - quick).toBeLessThan(600);
  });
});

describe('our numbers per account, payments and webhooks', () => {
  it('two clients may hold the same nossoNumero; the pay control wants the codigoSolicitacao then', async () => {
    const [a, b] = [newClient(), newClient()];
    for (const client of [a, b])
      expect(
        (await control('POST', `/sandbox/inter/clients/${client.clientId}/next-our-number`, { value: 4242 })).status,
      ).toBe(200);
    const [tokenA, tokenB] = [await a.token(), await b.token()];
    const [codigoA, codigoB] = [await a.create(tokenA), await b.create(tokenB)];
    const [viewA, viewB] = [await a.consult(tokenA, codigoA), await b.consult(tokenB, codigoB)];
    expect(viewA.boleto!.nossoNumero).toBe('00000004242');
    expect(viewB.boleto!.nossoNumero).toBe('00000004242');
    expect(viewA.boleto!.codigoBarras).not.toBe(viewB.boleto!.codigoBarras);

    const ambiguous = await control('POST', '/sandbox/charges/4242/pay', { method: 'pix' });
    expect(ambiguous.status).toBe(409);
    expect(JSON.stringify(ambiguous.body)).toContain(codigoA);

    await a.call('PUT', '/cobranca/v3/cobrancas/webhook', {
      token: tokenA,
      json: { webhookUrl: harness.receiver.url.replace('bank-sandbox', 'inter') },
    });
    const paid = await control('POST', `/sandbox/charges/${codigoA}/pay`, { method: 'pix' });
    expect(paid.status).toBe(200);
    expectConforms(ChargeView, paid.body);
    const afterA = await a.consult(tokenA, codigoA);
    expect(afterA.cobranca).toMatchObject({
      situacao: 'RECEBIDO',
      valorTotalRecebido: '2500.00',
      origemRecebimento: 'PIX',
    });
    expect((await b.consult(tokenB, codigoB)).cobranca.situacao).toBe('A_RECEBER');

    const delivery = await eventually(() => {
      const found = harness.receiver.received.find((r) => r.body.includes(codigoA));
      if (!found) throw new Error('no webhook yet');
      return found;
    });
    const body = JSON.parse(delivery.body) as unknown;
    expectConforms(WebhookBody, body);
    expect((body as WebhookBody)[0]).toMatchObject({
      codigoSolicitacao: codigoA,
      situacao: 'RECEBIDO',
      valorTotalRecebido: '2500.00',
      origemRecebimento: 'PIX',
      nossoNumero: '00000004242',
    });

    // Once B's is paid too, the number stays ambiguous; a number only one Inter charge has is payable by it.
    await control('POST', `/sandbox/inter/clients/${b.clientId}/next-our-number`, { value: 777001 });
    const unique = await b.create(tokenB);
    const byNumber = await control('POST', '/sandbox/charges/777001/pay', { method: 'manual' });
    expect(byNumber.status).toBe(200);
    expect((await b.consult(tokenB, unique)).cobranca.situacao).toBe('MARCADO_RECEBIDO');
  });

  it('webhook registration: PUT, GET, DELETE; the sandbox`s own charges are paid as before', async () => {
    const client = newClient();
    const token = await client.token();
    const put = await client.call('PUT', '/cobranca/v3/cobrancas/webhook', {
      token,
      json: fixtures.webhookRegistration,
    });
    expect(put.status).toBe(204);
    expect((await client.call('GET', '/cobranca/v3/cobrancas/webhook', { token })).body).toMatchObject(
      fixtures.webhookRegistration,
    );
    expect((await client.call('DELETE', '/cobranca/v3/cobrancas/webhook', { token })).status).toBe(204);
    expect((await client.call('GET', '/cobranca/v3/cobrancas/webhook', { token })).status).toBe(404);
    expect((await control('POST', '/sandbox/charges/99999999999/pay', { method: 'pix' })).status).toBe(404);
  });
});
