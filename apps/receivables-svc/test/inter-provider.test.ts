import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateChargeRequest, interViolations, seuNumeroFor, type ChargeView } from '@payments/inter-cobranca';
import * as fixtures from '@payments/inter-cobranca/fixtures';
import { createTestCertificateAuthority } from '@payments/inter-cobranca/test-certificates';
import type { InterCredentials } from '@payments/contracts';
import { barcodeProblems, brCodeProblems, typeableLineProblems } from '@payments/test-support/slip-checks';
import {
  ProviderUnavailableError,
  type BatchRegistrationOutcome,
  type ChargeRequest,
  type ProviderAccount,
  type ProviderCharge,
} from '../src/domain/ports';
import { InterProvider, InvalidInterWebhookError, parseInterWebhook } from '../src/transport/providers/inter';
import { toCreateRequest } from '../src/transport/providers/inter/mapping';
import { startInterSandbox, type InterSandbox } from './inter-sandbox';

/**
 * The Inter adapter against the bank sandbox's Inter dialect (its own process, mutual TLS with a
 * throwaway CA), and its error mapping against a scripted stand-in.
 */

let sandbox: InterSandbox;
let receiver: WebhookReceiver;
const credentials = new Map<string, InterCredentials>();
const providers: InterProvider[] = [];

beforeAll(async () => {
  [sandbox, receiver] = await Promise.all([startInterSandbox(), WebhookReceiver.start()]);
}, 60_000);
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await Promise.all([sandbox?.stop(), receiver?.stop()]);
});

function provider(overrides: Partial<ConstructorParameters<typeof InterProvider>[0]> = {}): InterProvider {
  const created = new InterProvider({
    credentials: (account) => {
      const found = credentials.get(account.id);
      if (!found) return Promise.reject(new Error(`provider account ${account.id} has no credentials`));
      // The sealed text stands for the credentials version: a new one is a renewal.
      return Promise.resolve({ versionId: `${account.id}:${account.sealedCredentials}`, credentials: found });
    },
    defaultBaseUrl: sandbox.interBaseUrl,
    timeoutMs: 1_500,
    webhookUrl: (accountId) => `${receiver.url}/provider/webhooks/inter/${accountId}`,
    trustedCaPem: sandbox.ca.certPem,
    issuePollMs: [0, 100, 300],
    ...overrides,
  });
  providers.push(created);
  return created;
}

/** A new Inter account: its own client_id and a client certificate of `issuer` (the sandbox's CA by default). */
function account(issuer = sandbox.ca, baseUrl: string | null = null): ProviderAccount & { clientId: string } {
  const id = randomUUID();
  const clientId = `client-${id.slice(0, 8)}`;
  const cert = issuer.issue({ commonName: clientId, kind: 'client' });
  credentials.set(id, {
    client_id: clientId,
    client_secret: `secret-${id}`,
    cert_pem: cert.certPem,
    key_pem: cert.keyPem,
  });
  return {
    id,
    clientId,
    tenantId: randomUUID(),
    provider: 'inter',
    accountKey: `inter:${clientId}`,
    beneficiary: {
      name: 'Empresa Exemplo Ltda',
      tax_id: '11444777000161',
      city: 'Belo Horizonte',
      pix_key: null,
      agency: null,
      account: null,
      address: null,
    },
    baseUrl,
    sealedCredentials: 'sealed',
  } as ProviderAccount & { clientId: string };
}

function chargeRequest(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  return {
    idempotencyKey: randomUUID(),
    providerChargeId: null,
    createMarkedAt: null,
    kind: 'hybrid_slip',
    amountCents: 123_456,
    issueDate: '2026-11-23',
    dueDate: '2027-12-15',
    payer: {
      clientId: randomUUID(),
      name: 'Maria da Silva',
      taxId: '529.982.247-25',
      address: 'Rua das Flores',
      number: '100',
      neighborhood: 'Centro',
      city: 'Belo Horizonte',
      state: 'MG',
      zipCode: '30110-012',
      email: 'maria@example.com',
    },
    discount: { amountCents: 1_000, until: '2027-12-10' },
    fineBp: 200,
    interestPerDayCents: 41,
    instructions: ['Não receber após 60 dias do vencimento'],
    descriptionLines: [],
    reference: 'ref-1',
    ...overrides,
  };
}

function registered(outcome: BatchRegistrationOutcome): ProviderCharge {
  if (outcome.kind !== 'registered') throw new Error(`expected registered, got ${JSON.stringify(outcome)}`);
  return outcome.charge;
}

async function sandboxChargesOf(request: ChargeRequest): Promise<ChargeView[]> {
  const answer = await sandbox.control(
    'GET',
    `/sandbox/inter/charges?seu_numero=${seuNumeroFor(request.idempotencyKey)}`,
  );
  return (answer.body as { charges: ChargeView[] }).charges;
}

describe('the Inter adapter against the bank sandbox (mutual TLS)', () => {
  it('issues charges: registered with nossoNumero, a valid slip and BR Code, one token for every call', async () => {
    const inter = provider();
    const acc = account();
    const requests = [chargeRequest(), chargeRequest({ amountCents: 5_000 }), chargeRequest({ kind: 'pix' })];
    const outcomes = await inter.registerMany(acc, requests);
    const [first, second, pixOnly] = outcomes.map(registered);
    expect(first.ourNumber).toMatch(/^\d{11}$/);
    expect(new Set([first.ourNumber, second.ourNumber, pixOnly.ourNumber]).size).toBe(3);
    expect(barcodeProblems(first.barcode!, { amountCents: 123_456, dueDate: '2027-12-15' })).toEqual([]);
    expect(typeableLineProblems(first.typeableLine!, first.barcode!)).toEqual([]);
    expect(brCodeProblems(first.pixCopyAndPaste)).toEqual([]);
    expect(first.pdfUrl).toBe(`${sandbox.interBaseUrl}/cobranca/v3/cobrancas/${first.chargeId}/pdf`);
    expect(pixOnly.barcode).toBeNull();
    expect(brCodeProblems(pixOnly.pixCopyAndPaste)).toEqual([]);

    expect(await inter.consult(acc, first.chargeId)).toEqual({ kind: 'open' });
    expect((await inter.slipPdf(acc, first.chargeId)).subarray(0, 5).toString()).toBe('%PDF-');
    expect(inter.tokenRequestsOf(acc)).toBe(1);
    expect(await sandboxChargesOf(requests[0])).toHaveLength(1);
  });

  it('sends create requests that conform to the contract schema', () => {
    const built = toCreateRequest(chargeRequest(), 60);
    if (!built.ok) throw new Error(JSON.stringify(built.violations));
    expect(interViolations(CreateChargeRequest, built.body)).toEqual([]);
    expect(Object.keys(built.body).sort()).toEqual(Object.keys(fixtures.createChargeRequest).sort());
    expect(built.body).toMatchObject({
      valorNominal: 1234.56,
      dataVencimento: '2027-12-15',
      pagador: { cpfCnpj: '52998224725', tipoPessoa: 'FISICA', cep: '30110012', uf: 'MG' },
      desconto: { codigo: 'VALORFIXODATAINFORMADA', valor: 10, quantidadeDias: 5 },
      multa: { codigo: 'PERCENTUAL', taxa: 2 },
      mora: { codigo: 'VALORDIA', valor: 0.41 },
      mensagem: { linha1: 'Não receber após 60 dias do vencimento' },
    });
    expect(built.body.seuNumero).toMatch(/^\d{15}$/);
  });

  it('rejects, without calling Inter, a charge Inter would refuse (payer without address)', async () => {
    const inter = provider();
    const request = chargeRequest({ payer: { ...chargeRequest().payer, address: null, zipCode: null } });
    const [outcome] = await inter.registerMany(account(), [request]);
    expect(outcome).toMatchObject({ kind: 'rejected', code: 'invalid_request' });
    expect((outcome as { message: string }).message).toContain('/pagador/endereco');
    expect(await sandboxChargesOf(request)).toEqual([]);
  });

  it('consults a paid charge (pix, slip, manual) and parses the webhook the sandbox posts', async () => {
    const inter = provider();
    const acc = account();
    const [byPix, bySlip, manual] = (
      await inter.registerMany(acc, [chargeRequest(), chargeRequest(), chargeRequest()])
    ).map(registered);
    expect((await sandbox.control('POST', `/sandbox/charges/${byPix.chargeId}/pay`, { method: 'pix' })).status).toBe(
      200,
    );
    expect(
      (await sandbox.control('POST', `/sandbox/charges/${bySlip.chargeId}/pay`, { method: 'boleto', amount: 1200 }))
        .status,
    ).toBe(200);
    expect(
      (await sandbox.control('POST', `/sandbox/charges/${manual.chargeId}/pay`, { method: 'manual' })).status,
    ).toBe(200);

    const pix = await inter.consult(acc, byPix.chargeId);
    expect(pix).toMatchObject({ kind: 'paid', payment: { amountPaidCents: 123_456, feeCents: 0, method: 'pix' } });
    expect(pix.kind === 'paid' && pix.payment.paidAt.getTime()).toBeGreaterThan(Date.now() - 2 * 86_400_000);
    expect(await inter.consult(acc, bySlip.chargeId)).toMatchObject({
      kind: 'paid',
      payment: { amountPaidCents: 120_000, method: 'boleto' },
    });
    expect(await inter.consult(acc, manual.chargeId)).toMatchObject({ kind: 'paid', payment: { method: 'manual' } });
    expect(await inter.consult(acc, randomUUID())).toEqual({ kind: 'unknown' });

    const posted = await eventually(() => {
      const found = receiver.bodies.find(
        (b) => b.path.endsWith(`/${acc.id}`) && b.body.includes(byPix.chargeId) && b.body.includes('"RECEBIDO"'),
      );
      if (!found) throw new Error('no webhook yet');
      return found;
    });
    expect(parseInterWebhook(posted.body)).toEqual([
      expect.objectContaining({
        chargeId: byPix.chargeId,
        kind: 'paid',
        situation: 'RECEBIDO',
        method: 'pix',
        amountReceivedCents: 123_456,
        atPrecision: 'time',
        verified: false,
        ourNumber: byPix.ourNumber,
      }),
    ]);
  });

  it('cancels an open charge; a paid one is not_open', async () => {
    const inter = provider();
    const acc = account();
    const [open, paid] = (await inter.registerMany(acc, [chargeRequest(), chargeRequest()])).map(registered);
    expect(await inter.cancel(acc, open.chargeId, 'the ERP cancelled the receivable')).toBe('cancelled');
    expect(await inter.consult(acc, open.chargeId)).toEqual({ kind: 'cancelled' });
    expect(await inter.cancel(acc, open.chargeId, 'again')).toBe('cancelled');
    await sandbox.control('POST', `/sandbox/charges/${paid.chargeId}/pay`, { method: 'pix' });
    expect(await inter.cancel(acc, paid.chargeId, 'too late')).toBe('not_open');
    // A charge the bank does not know: its refusal is permanent, not an outage to wait out.
    expect(await inter.cancel(acc, randomUUID(), 'unknown')).toBe('refused');
  });

  it('a client certificate of another CA fails the handshake: ProviderUnavailableError, nothing issued', async () => {
    const inter = provider();
    const intruder = account(createTestCertificateAuthority('not the bank`s CA'));
    const request = chargeRequest();
    await expect(inter.registerMany(intruder, [request])).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(inter.consult(intruder, randomUUID())).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(await sandboxChargesOf(request)).toEqual([]);
  });

  it('an account that comes with other credentials is served with them (the old connection is dropped)', async () => {
    const inter = provider();
    const acc = account();
    registered((await inter.registerMany(acc, [chargeRequest()]))[0]);
    const creds = credentials.get(acc.id)!;
    // A certificate the bank does not trust: if the adapter kept the old connection, this would still work.
    const foreign = createTestCertificateAuthority('renewed elsewhere').issue({ commonName: 'x', kind: 'client' });
    credentials.set(acc.id, { ...creds, cert_pem: foreign.certPem, key_pem: foreign.keyPem });
    const renewed = { ...acc, sealedCredentials: 'sealed-again' };
    await expect(inter.consult(renewed, randomUUID())).rejects.toBeInstanceOf(ProviderUnavailableError);
    const valid = sandbox.ca.issue({ commonName: acc.clientId, kind: 'client' });
    credentials.set(acc.id, { ...creds, cert_pem: valid.certPem, key_pem: valid.keyPem });
    const again = { ...acc, sealedCredentials: 'sealed-third' };
    expect(registered((await inter.registerMany(again, [chargeRequest()]))[0]).ourNumber).toMatch(/^\d{11}$/);
    expect(inter.tokenRequestsOf(acc)).toBe(1);
  });

  it('a create that times out after the bank stored it is found by seuNumero: exactly one boleto', async () => {
    const inter = provider({ timeoutMs: 800 });
    const acc = account();
    const request = chargeRequest();
    await inter.registerMany(acc, [chargeRequest()]); // token and webhook in place
    await sandbox.control('POST', '/sandbox/inter/behaviour', { slow_once_ms: 2_000 });
    const started = Date.now();
    const charge = registered((await inter.registerMany(acc, [request]))[0]);
    expect(Date.now() - started).toBeLessThan(2_000); // it gave up on the create and found the charge instead
    const stored = await sandboxChargesOf(request);
    expect(stored.map((c) => c.cobranca.codigoSolicitacao)).toEqual([charge.chargeId]);
    // Asked again with the id it learnt: consulted, not created.
    const again = registered((await inter.registerMany(acc, [{ ...request, providerChargeId: charge.chargeId }]))[0]);
    expect(again.chargeId).toBe(charge.chargeId);
    expect(await sandboxChargesOf(request)).toHaveLength(1);
  });

  it('when the lookup after a timeout fails too, the next attempt looks up before creating', async () => {
    const inter = provider({ timeoutMs: 800 });
    const acc = account();
    const request = chargeRequest();
    await inter.registerMany(acc, [chargeRequest()]);
    await sandbox.control('POST', '/sandbox/inter/behaviour', { slow_once_ms: 2_000 });
    const first = inter.registerMany(acc, [request]);
    // The charge is stored at once; the bank then goes down before the adapter's lookup.
    await eventually(async () => expect(await sandboxChargesOf(request)).toHaveLength(1));
    await sandbox.control('POST', '/sandbox/behaviour', { mode: 'down' });
    try {
      expect((await first)[0]).toMatchObject({ kind: 'unavailable' });
    } finally {
      await sandbox.control('POST', '/sandbox/behaviour', { mode: 'normal' });
    }
    const retried = registered((await inter.registerMany(acc, [request]))[0]);
    const stored = await sandboxChargesOf(request);
    expect(stored.map((c) => c.cobranca.codigoSolicitacao)).toEqual([retried.chargeId]);
  });

  it('a charge not issued yet is unavailable with its id; the next attempt consults it', async () => {
    const inter = provider();
    const acc = account();
    const request = chargeRequest();
    await sandbox.control('POST', '/sandbox/inter/behaviour', { issue_delay_ms: 1_000 });
    let outcome: BatchRegistrationOutcome;
    try {
      [outcome] = await inter.registerMany(acc, [request]);
    } finally {
      await sandbox.control('POST', '/sandbox/inter/behaviour', { issue_delay_ms: 0 });
    }
    expect(outcome).toMatchObject({ kind: 'unavailable' });
    const chargeId = (outcome as { chargeId?: string }).chargeId!;
    expect(chargeId).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((r) => setTimeout(r, 1_000));
    const charge = registered((await inter.registerMany(acc, [{ ...request, providerChargeId: chargeId }]))[0]);
    expect(charge.chargeId).toBe(chargeId);
    expect(await sandboxChargesOf(request)).toHaveLength(1);
  });

  it('FALHA_EMISSAO is rejected; a refused create (400) is rejected; a 503 is unavailable', async () => {
    const inter = provider();
    const acc = account();
    await inter.registerMany(acc, [chargeRequest()]);
    await sandbox.control('POST', '/sandbox/inter/behaviour', { fail_issue_once: true });
    expect((await inter.registerMany(acc, [chargeRequest()]))[0]).toMatchObject({
      kind: 'rejected',
      code: 'inter_issue_failed',
    });
    const payer = chargeRequest().payer;
    const [refused, failed] = await inter.registerMany(acc, [
      chargeRequest({ payer: { ...payer, name: 'Maria [sandbox:reject]' } }),
      chargeRequest({ payer: { ...payer, name: 'Maria [sandbox:fail]' } }),
    ]);
    expect(refused).toMatchObject({ kind: 'rejected', code: 'inter_400' });
    expect(failed).toMatchObject({ kind: 'unavailable' });
  });

  it('two accounts keep their charges apart (our numbers are unique across the sandbox)', async () => {
    const inter = provider();
    const [a, b] = [account(), account()];
    for (const acc of [a, b])
      await sandbox.control('POST', `/sandbox/inter/clients/${acc.clientId}/next-our-number`, { value: 31337 });
    const [chargeA] = (await inter.registerMany(a, [chargeRequest()])).map(registered);
    const [chargeB] = (await inter.registerMany(b, [chargeRequest()])).map(registered);
    // One nossoNumero sequence for the whole sandbox: the pay control by our_number is never ambiguous.
    expect(chargeA.ourNumber).not.toBe(chargeB.ourNumber);
    await sandbox.control('POST', `/sandbox/charges/${chargeA.chargeId}/pay`, { method: 'pix' });
    expect((await inter.consult(a, chargeA.chargeId)).kind).toBe('paid');
    expect((await inter.consult(b, chargeB.chargeId)).kind).toBe('open');
    // Each account sees only its own charges.
    expect(await inter.consult(b, chargeA.chargeId)).toEqual({ kind: 'unknown' });
  });
});

describe('error mapping (a scripted Inter)', () => {
  let stub: ScriptedInter;
  beforeAll(async () => {
    stub = await ScriptedInter.start();
  });
  afterAll(() => stub.stop());

  it.each([
    [400, 'rejected'],
    [404, 'rejected'],
    [422, 'rejected'],
    [403, 'unavailable'],
    [408, 'unavailable'],
    [409, 'unavailable'],
    [429, 'unavailable'],
    [500, 'unavailable'],
    [502, 'unavailable'],
    [503, 'unavailable'],
  ])('create answered %i: %s', async (status, kind) => {
    stub.createStatuses = [status];
    const [outcome] = await provider({ defaultBaseUrl: stub.url }).registerMany(account(sandbox.ca, stub.url), [
      chargeRequest(),
    ]);
    expect(outcome.kind).toBe(kind);
    if (kind === 'rejected') expect(outcome).toMatchObject({ code: `inter_${status}` });
  });

  it('401 drops the token and tries once more with a new one', async () => {
    stub.createStatuses = [401];
    stub.tokenRequests = 0;
    const [outcome] = await provider().registerMany(account(sandbox.ca, stub.url), [chargeRequest()]);
    expect(outcome).toMatchObject({ kind: 'registered' });
    expect(stub.tokenRequests).toBe(2);
  });

  it('401 twice is unavailable (retried later)', async () => {
    stub.createStatuses = [401, 401];
    const [outcome] = await provider().registerMany(account(sandbox.ca, stub.url), [chargeRequest()]);
    expect(outcome).toMatchObject({ kind: 'unavailable' });
  });

  it('no answer at all: ProviderUnavailableError', async () => {
    const closed = account(sandbox.ca, 'http://127.0.0.1:9');
    await expect(provider().registerMany(closed, [chargeRequest()])).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe('parseInterWebhook', () => {
  it('reads the documented body (a JSON array) into notices', () => {
    expect(parseInterWebhook(JSON.stringify(fixtures.webhookPaid))).toEqual([
      expect.objectContaining({
        chargeId: fixtures.webhookPaid[0].codigoSolicitacao,
        kind: 'paid',
        situation: 'RECEBIDO',
        ourNumber: fixtures.webhookPaid[0].nossoNumero,
      }),
    ]);
  });

  it.each([
    ['not JSON', '{'],
    ['an empty array', '[]'],
    [
      'an item without codigoSolicitacao',
      JSON.stringify([{ ...fixtures.webhookPaid[0], codigoSolicitacao: undefined }]),
    ],
    ['an unknown situacao', JSON.stringify([{ ...fixtures.webhookPaid[0], situacao: 'PAGO' }])],
  ])('refuses %s with InvalidInterWebhookError', (_name, body) => {
    expect(() => parseInterWebhook(body)).toThrow(InvalidInterWebhookError);
  });
});

/** Records the webhooks the sandbox posts. */
class WebhookReceiver {
  readonly bodies: Array<{ path: string; body: string }> = [];
  url = '';
  private server!: Server;

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    receiver.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        receiver.bodies.push({ path: req.url ?? '', body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A plain-HTTP stand-in for Inter whose create answers the scripted statuses, then issues. */
class ScriptedInter {
  createStatuses: number[] = [];
  tokenRequests = 0;
  url = '';
  private server!: Server;

  static async start(): Promise<ScriptedInter> {
    const stub = new ScriptedInter();
    stub.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => stub.answer(req.method ?? '', req.url ?? '', res));
    });
    await new Promise<void>((resolve) => stub.server.listen(0, '127.0.0.1', resolve));
    stub.url = `http://127.0.0.1:${(stub.server.address() as AddressInfo).port}`;
    return stub;
  }

  private answer(method: string, url: string, res: import('node:http').ServerResponse): void {
    const json = (status: number, body: unknown): void =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url === '/oauth/v2/token') {
      this.tokenRequests += 1;
      return json(200, { ...fixtures.tokenResponse, access_token: `token-${this.tokenRequests}` });
    }
    if (method === 'PUT' && url === '/cobranca/v3/cobrancas/webhook') return void res.writeHead(204).end();
    if (method === 'POST' && url === '/cobranca/v3/cobrancas') {
      const status = this.createStatuses.shift() ?? 200;
      if (status !== 200) return json(status, { ...fixtures.errorBody, status });
      return json(200, fixtures.createChargeResponse);
    }
    // The lookup by seuNumero a refused create makes before its charge is rejected: nothing there.
    if (method === 'GET' && url.startsWith('/cobranca/v3/cobrancas?')) return json(200, { cobrancas: [] });
    if (method === 'GET' && url.startsWith('/cobranca/v3/cobrancas/')) return json(200, fixtures.chargeIssued);
    json(404, { title: 'Not Found' });
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
