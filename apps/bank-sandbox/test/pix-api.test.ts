import { standardViolations } from '@payments/pix-api';
import { eventually, noticeSuite } from './harness';
import { emitirBody } from './inter-reference';
import {
  crc16,
  parseTlv,
  PixNoticeReceiver,
  PixTestClient,
  type CobV,
  type Devolucao,
  type Pix,
  type PixIntegration,
  type Problema,
} from './pix-client';

/**
 * The bank sandbox's PIX API (the Central Bank's standard, and Inter's dialect of it) over mutual TLS,
 * with integrations the sandbox issues: cobv create, consult, revise, remove and list; the webhook and
 * its notices; the pay control by txid with the amount due after the due date checked by arithmetic
 * done here; devoluções; the BR Code; the faults. Every answer is checked against the schemas
 * generated from the standard's document (libs/pix-api).
 */

const RETRY_MS = [100, 200];
const receiver = new PixNoticeReceiver();
const suite = noticeSuite({
  caName: 'PIX sandbox test CA',
  retryMs: RETRY_MS,
  receiver,
  faultsPath: '/sandbox/pix/faults',
});
const { ca, clients, sandbox } = suite;

/** Today in Brasília, and a date `days` after a date (calendar arithmetic, UTC-based). */
function brasiliaToday(): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date());
}
function plusDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

let txidCounter = 0;
function newTxid(): string {
  txidCounter += 1;
  return `rcv${Date.now().toString(16)}${String(txidCounter).padStart(4, '0')}`.padEnd(35, 'a');
}

/** A standard-dialect integration, logged in with the PIX scopes. */
async function standardClient(scope?: string): Promise<{ client: PixTestClient; integration: PixIntegration }> {
  const answer = await sandbox('POST', '/sandbox/pix/integrations');
  expect(answer.status).toBe(201);
  const integration = answer.body as unknown as PixIntegration;
  const client = new PixTestClient(integration.pix_api_url, ca.certPem, integration);
  clients.push(client);
  const token = await client.login(integration.token_url, integration.client_id, integration.client_secret, scope);
  expect(token.status).toBe(200);
  return { client, integration };
}

function cobvBody(
  chave: string,
  overrides: { dueDate?: string; valor?: Record<string, unknown>; devedor?: Record<string, string> } = {},
) {
  return {
    calendario: { dataDeVencimento: overrides.dueDate ?? plusDays(brasiliaToday(), 5), validadeAposVencimento: 60 },
    devedor: {
      ...(overrides.devedor ?? { cpf: '12345678909', nome: 'Fulano de Tal' }),
      logradouro: 'Rua A, 1',
      cidade: 'Curitiba',
      uf: 'PR',
      cep: '80000000',
    },
    valor: { original: '100.00', ...overrides.valor },
    chave,
    solicitacaoPagador: 'Parcela 1',
  };
}

/** Violations of a value against one of the standard's schemas. */
const conforms = (schema: string, value: unknown) => expect(standardViolations(schema, value)).toEqual([]);

describe('cobv', () => {
  it('creates with PUT (201, CobVGerada), consults (CobVCompleta), and a second PUT makes no second charge', async () => {
    const { client, integration } = await standardClient();
    const txid = newTxid();
    const created = await client.call<CobV>('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key) });
    expect(created.status).toBe(201);
    conforms('CobVGerada', created.body);
    expect(created.body).toMatchObject({ txid, status: 'ATIVA', revisao: 0, chave: integration.pix_key });

    const again = await client.call<CobV>('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key) });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ txid, revisao: 0, loc: { id: created.body.loc.id } });
    const charges = await sandbox('GET', `/sandbox/pix/charges?client_id=${integration.client_id}`);
    expect((charges.body.charges as CobV[]).filter((c) => c.txid === txid)).toHaveLength(1);

    const consulted = await client.call<CobV>('GET', `/cobv/${txid}`);
    expect(consulted.status).toBe(200);
    conforms('CobVCompleta', consulted.body);
    expect(consulted.body.pixCopiaECola).toBe(created.body.pixCopiaECola);
  });

  it('stores a create it answers late (slow_once_ms): the client gives up, its retry finds the same cobv', async () => {
    const { client, integration } = await standardClient();
    expect((await sandbox('POST', '/sandbox/inter/behaviour', { slow_once_ms: 4_000 })).status).toBe(200);
    const txid = newTxid();
    const body = cobvBody(integration.pix_key);
    let answered = false;
    const first = client.call('PUT', `/cobv/${txid}`, { json: body, signal: AbortSignal.timeout(1_500) });
    void first.then(
      () => (answered = true),
      () => undefined,
    );
    const listed = async () =>
      ((await sandbox('GET', `/sandbox/pix/charges?client_id=${integration.client_id}`)).body.charges as CobV[]).length;
    await eventually(async () => expect(await listed()).toBe(1));
    expect(answered).toBe(false);
    await expect(first).rejects.toThrow();
    const retried = await client.call<CobV>('PUT', `/cobv/${txid}`, { json: body });
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({ txid, revisao: 0, status: 'ATIVA' });
    expect(await listed()).toBe(1);
  });

  it('revises an ATIVA cobv (revisao + 1), removes it with PATCH, and refuses changes to a removed one', async () => {
    const { client, integration } = await standardClient();
    const txid = newTxid();
    expect((await client.call('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key) })).status).toBe(201);
    const revised = await client.call<CobV>('PUT', `/cobv/${txid}`, {
      json: cobvBody(integration.pix_key, { valor: { original: '120.00' } }),
    });
    expect(revised.status).toBe(201);
    expect(revised.body).toMatchObject({ revisao: 1, valor: { original: '120.00' } });
    const patched = await client.call<CobV>('PATCH', `/cobv/${txid}`, {
      json: { solicitacaoPagador: 'Parcela única' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.revisao).toBe(2);

    const both = await client.call<Problema>('PATCH', `/cobv/${txid}`, {
      json: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', solicitacaoPagador: 'x' },
    });
    expect(both.status).toBe(400);
    const removed = await client.call<CobV>('PATCH', `/cobv/${txid}`, {
      json: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' },
    });
    expect(removed.status).toBe(200);
    conforms('CobVGerada', removed.body);
    expect(removed.body.status).toBe('REMOVIDA_PELO_USUARIO_RECEBEDOR');

    const refused = await client.call<Problema>('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key) });
    expect(refused.status).toBe(400);
    conforms('Problema', refused.body);
    expect(refused.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida');
    expect(
      (await client.call('PATCH', `/cobv/${txid}`, { json: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } })).status,
    ).toBe(400);
    expect((await sandbox('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix' })).status).toBe(409);
  });

  it('refuses a chave that is not the integration`s, a body off the schema, and answers 404 for an unknown txid', async () => {
    const { client, integration } = await standardClient();
    const foreign = await client.call<Problema>('PUT', `/cobv/${newTxid()}`, {
      json: cobvBody('someone-else@example.com'),
    });
    expect(foreign.status).toBe(400);
    conforms('Problema', foreign.body);
    expect(foreign.body.violacoes?.[0]).toMatchObject({ propriedade: 'cobv.chave' });
    const noValue = { ...cobvBody(integration.pix_key), valor: undefined };
    const invalid = await client.call<Problema>('PUT', `/cobv/${newTxid()}`, { json: noValue });
    expect(invalid.status).toBe(400);
    expect(invalid.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida');
    const missing = await client.call<Problema>('GET', `/cobv/${newTxid()}`);
    expect(missing.status).toBe(404);
    conforms('Problema', missing.body);
    expect(missing.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/CobVNaoEncontrada');
  });

  it('lists the cobvs created in a window, paged (CobsVConsultadas)', async () => {
    const { client, integration } = await standardClient();
    const from = new Date(Date.now() - 1_000).toISOString();
    const txids = [newTxid(), newTxid(), newTxid()];
    const company = { cnpj: '11222333000181', nome: 'Empresa de Tal Ltda' };
    for (const txid of txids)
      expect(
        (await client.call('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key, { devedor: company }) }))
          .status,
      ).toBe(201);
    const to = new Date(Date.now() + 1_000).toISOString();
    const first = await client.call<{ cobs: CobV[]; parametros: { paginacao: Record<string, number> } }>(
      'GET',
      `/cobv?inicio=${from}&fim=${to}&paginacao.itensPorPagina=2`,
    );
    expect(first.status).toBe(200);
    conforms('CobsVConsultadas', first.body);
    expect(first.body.parametros.paginacao).toEqual({
      paginaAtual: 0,
      itensPorPagina: 2,
      quantidadeDePaginas: 2,
      quantidadeTotalDeItens: 3,
    });
    const second = await client.call<{ cobs: CobV[] }>(
      'GET',
      `/cobv?inicio=${from}&fim=${to}&paginacao.itensPorPagina=2&paginacao.paginaAtual=1`,
    );
    expect([...first.body.cobs, ...second.body.cobs].map((c) => c.txid)).toEqual(txids);
    const backwards = await client.call<Problema>('GET', `/cobv?inicio=${to}&fim=${from}`);
    expect(backwards.status).toBe(400);
    expect(backwards.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/CobVConsultaInvalida');
  });
});

describe('BR Code and location', () => {
  it('is a dynamic code: CRC, the holder as merchant, the location URL, no key and txid ***', async () => {
    const { client, integration } = await standardClient();
    const holder = await sandbox('PUT', `/sandbox/inter/clients/${integration.client_id}/holder`, {
      name: 'Padaria São João Ltda',
      tax_id: '11222333000181',
      city: 'Curitiba',
      pix_key: integration.pix_key,
    });
    expect(holder.status).toBe(200);
    const txid = newTxid();
    const created = await client.call<CobV>('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key) });
    const code = created.body.pixCopiaECola;

    const fields = parseTlv(code);
    expect(code.slice(-4)).toBe(crc16(code.slice(0, -4)));
    expect(fields.get('00')).toBe('01');
    expect(fields.get('59')).toBe('PADARIA SAO JOAO LTDA');
    expect(fields.get('60')).toBe('CURITIBA');
    expect(fields.get('53')).toBe('986');
    expect(fields.has('54')).toBe(false);
    const account = parseTlv(fields.get('26') ?? '');
    expect(account.get('00')).toBe('br.gov.bcb.pix');
    expect(account.get('25')).toBe(created.body.loc.location);
    expect(account.has('01')).toBe(false);
    expect(parseTlv(fields.get('62') ?? '').get('05')).toBe('***');

    // The location serves the cobv's payload (JSON here; a real PSP signs it as a JWS).
    const payload = await fetch(`http://${created.body.loc.location}`);
    expect(payload.status).toBe(200);
    const body = (await payload.json()) as { txid: string; valor: { final: string } };
    conforms('CobVPayload', body);
    expect(body).toMatchObject({ txid, valor: { final: '100.00' } });
  });
});

describe('payment, notices and devoluções', () => {
  it('charges multa and juros after the due date, by arithmetic done here, and notices { pix } at <url>/pix', async () => {
    const { client, integration } = await standardClient();
    const put = await client.call('PUT', `/webhook/${integration.pix_key}`, { json: { webhookUrl: receiver.url } });
    expect(put.status).toBe(200);
    const webhook = await client.call('GET', `/webhook/${integration.pix_key}`);
    conforms('WebhookCompleto', webhook.body);

    const due = brasiliaToday();
    const txid = newTxid();
    const terms = {
      original: '100.00',
      multa: { modalidade: 2, valorPerc: '2.00' },
      juros: { modalidade: 1, valorPerc: '0.33' },
    };
    expect(
      (
        await client.call('PUT', `/cobv/${txid}`, {
          json: cobvBody(integration.pix_key, { dueDate: due, valor: terms }),
        })
      ).status,
    ).toBe(201);

    const daysLate = 10;
    // original 100.00, fine 2 % of it once, interest 0.33 a calendar day late: in cents.
    const expectedCents = 10_000 + (10_000 * 2) / 100 + 33 * daysLate;
    expect(expectedCents).toBe(10_530);
    receiver.script.push(500); // the first notice is refused, and sent again
    const paid = await sandbox('POST', `/sandbox/charges/${txid}/pay`, {
      method: 'pix',
      paid_on: plusDays(due, daysLate),
    });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ txid, status: 'CONCLUIDA' });
    const payment = (paid.body.pix as Pix[])[0];
    expect(payment.valor).toBe((expectedCents / 100).toFixed(2));
    expect(payment.componentesValor).toEqual({
      original: { valor: '100.00' },
      multa: { valor: '2.00' },
      juros: { valor: '3.30' },
    });

    await eventually(() => expect(receiver.itemsFor(txid).length).toBeGreaterThanOrEqual(2), 5_000);
    const deliveries = receiver.received.filter((r) => r.body.pix.some((p) => p.txid === txid));
    expect(deliveries.map((d) => d.answeredWith)).toEqual([500, 200]);
    for (const delivery of deliveries) {
      expect(delivery.path).toBe('/provider/webhooks/pix/account-1/pix');
      for (const item of delivery.body.pix) conforms('Pix', item);
    }
    expect(receiver.itemsFor(txid)[0]).toMatchObject({ endToEndId: payment.endToEndId, valor: '105.30' });
    const atTheBank = await sandbox('GET', `/sandbox/pix/charges/${txid}`);
    await eventually(async () =>
      expect((await sandbox('GET', `/sandbox/pix/charges/${txid}`)).body.notifications).toEqual([
        expect.objectContaining({ status: 'delivered', attempt_count: 2, last_status_code: 200 }),
      ]),
    );
    expect(atTheBank.body).toMatchObject({ client_id: integration.client_id, txid, status: 'CONCLUIDA' });

    const consulted = await client.call<CobV>('GET', `/cobv/${txid}`);
    conforms('CobVCompleta', consulted.body);
    expect(consulted.body).toMatchObject({
      status: 'CONCLUIDA',
      pix: [{ endToEndId: payment.endToEndId, valor: '105.30' }],
    });
    const one = await client.call<Pix>('GET', `/pix/${payment.endToEndId}`);
    conforms('Pix', one.body);
    const from = new Date(Date.parse(payment.horario) - 60_000).toISOString();
    const to = new Date(Date.parse(payment.horario) + 60_000).toISOString();
    const list = await client.call<{ pix: Pix[]; parametros: { paginacao: Record<string, number> } }>(
      'GET',
      `/pix?inicio=${from}&fim=${to}&txid=${txid}`,
    );
    expect(list.status).toBe(200);
    conforms('PixConsultados', list.body);
    expect(list.body.pix.map((p) => p.endToEndId)).toEqual([payment.endToEndId]);
    expect((await sandbox('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix' })).status).toBe(409);
  });

  it('takes the desconto up to its date, refuses a payment past validadeAposVencimento, and 404s an unknown txid', async () => {
    const { client, integration } = await standardClient();
    const due = plusDays(brasiliaToday(), 10);
    const txid = newTxid();
    const valor = {
      original: '200.00',
      desconto: { modalidade: 1, descontoDataFixa: [{ data: plusDays(due, -5), valorPerc: '15.00' }] },
    };
    await client.call('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key, { dueDate: due, valor }) });
    const late = await sandbox('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix', paid_on: plusDays(due, 61) });
    expect(late.status).toBe(409);
    const early = await sandbox('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix', paid_on: plusDays(due, -5) });
    expect(early.status).toBe(200);
    // 200.00 less the fixed 15.00 discount, paid on the discount's own date.
    expect((early.body.pix as Pix[])[0].valor).toBe(((20_000 - 1_500) / 100).toFixed(2));
    expect((await sandbox('POST', `/sandbox/charges/${newTxid()}/pay`, { method: 'pix' })).status).toBe(404);
  });

  it('makes a devolução at the bank (DEVOLVIDO) with its notice, and one through the API', async () => {
    const { client, integration } = await standardClient();
    await client.call('PUT', `/webhook/${integration.pix_key}`, { json: { webhookUrl: receiver.url } });
    const txid = newTxid();
    await client.call('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key) });
    const paid = await sandbox('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix', amount: 100 });
    const e2eid = (paid.body.pix as Pix[])[0].endToEndId;

    const refund = await sandbox('POST', '/sandbox/pix/refunds', { txid, amount: 30 });
    expect(refund.status).toBe(201);
    expect(refund.body).toMatchObject({ e2eid, valor: '30.00', status: 'DEVOLVIDO' });
    await eventually(() => expect(receiver.itemsFor(txid).some((p) => (p.devolucoes ?? []).length === 1)).toBe(true));
    const noticed = receiver.itemsFor(txid).find((p) => p.devolucoes)!;
    conforms('Pix', noticed);
    expect(noticed.devolucoes?.[0]).toMatchObject({ id: refund.body.id, valor: '30.00', status: 'DEVOLVIDO' });

    const viaApi = await client.call<Devolucao>('PUT', `/pix/${e2eid}/devolucao/D1`, { json: { valor: '20.00' } });
    expect(viaApi.status).toBe(201);
    conforms('Devolucao', viaApi.body);
    expect((await client.call<Devolucao>('GET', `/pix/${e2eid}/devolucao/D1`)).body).toMatchObject({
      id: 'D1',
      valor: '20.00',
    });
    const tooMuch = await client.call<Problema>('PUT', `/pix/${e2eid}/devolucao/D2`, { json: { valor: '50.01' } });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida');
    const rest = await sandbox('POST', '/sandbox/pix/refunds', { txid });
    expect(rest.body).toMatchObject({ valor: (100 - 30 - 20).toFixed(2), status: 'DEVOLVIDO' });
    expect((await sandbox('POST', '/sandbox/pix/refunds', { txid })).status).toBe(409);
    const cobv = await client.call<CobV>('GET', `/cobv/${txid}`);
    expect(cobv.body.pix?.[0].devolucoes?.map((d) => d.valor)).toEqual(['30.00', '20.00', '50.00']);
  });

  it('refuses a webhook for a chave that is not the integration`s', async () => {
    const { client } = await standardClient();
    const answer = await client.call<Problema>('PUT', '/webhook/someone-else@example.com', {
      json: { webhookUrl: receiver.url },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/WebhookOperacaoInvalida');
  });
});

describe('faults', () => {
  it('answers 404 for consult_not_found_ms after the create, then the cobv', async () => {
    const { client, integration } = await standardClient();
    expect((await sandbox('POST', '/sandbox/pix/faults', { consult_not_found_ms: 400 })).status).toBe(200);
    const txid = newTxid();
    await client.call('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key) });
    expect((await client.call('GET', `/cobv/${txid}`)).status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect((await client.call('GET', `/cobv/${txid}`)).status).toBe(200);
  });

  it('answers 429 with Retry-After beyond rate_limit_per_minute (set through /sandbox/inter/faults)', async () => {
    const { client } = await standardClient();
    expect((await sandbox('POST', '/sandbox/inter/faults', { rate_limit_per_minute: 2 })).status).toBe(200);
    const txid = newTxid();
    expect((await client.call('GET', `/cobv/${txid}`)).status).toBe(404);
    expect((await client.call('GET', `/cobv/${txid}`)).status).toBe(404);
    const refused = await client.call<Problema>('GET', `/cobv/${txid}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('sends no notice under drop_webhooks, and a cobv expired by the bank is REMOVIDA_PELO_PSP', async () => {
    const { client, integration } = await standardClient();
    await client.call('PUT', `/webhook/${integration.pix_key}`, { json: { webhookUrl: receiver.url } });
    expect((await sandbox('POST', '/sandbox/pix/faults', { drop_webhooks: true })).status).toBe(200);
    const [paidTxid, expiredTxid] = [newTxid(), newTxid()];
    for (const txid of [paidTxid, expiredTxid])
      await client.call('PUT', `/cobv/${txid}`, { json: cobvBody(integration.pix_key) });
    expect((await sandbox('POST', `/sandbox/charges/${paidTxid}/pay`, { method: 'pix' })).status).toBe(200);
    const expired = await sandbox('POST', `/sandbox/pix/charges/${expiredTxid}/expire`);
    expect(expired.body).toMatchObject({ status: 'REMOVIDA_PELO_PSP' });
    expect((await sandbox('POST', `/sandbox/charges/${expiredTxid}/pay`, { method: 'pix' })).status).toBe(409);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.itemsFor(paidTxid)).toEqual([]);
  });
});

describe('Inter`s dialect', () => {
  it('takes a token of Inter`s endpoint with the PIX scopes, answers under /inter/pix/v2, checks x-conta-corrente', async () => {
    const integration = (await sandbox('POST', '/sandbox/inter/integrations')).body as unknown as PixIntegration & {
      account: string;
    };
    const base = suite.harness.sandbox.inter!.baseUrl;
    const client = new PixTestClient(`${base}/pix/v2`, ca.certPem, integration);
    clients.push(client);
    const token = await client.call<{ access_token: string; scope: string }>('POST', '', {
      url: `${base}/oauth/v2/token`,
      form: {
        client_id: integration.client_id,
        client_secret: integration.client_secret,
        grant_type: 'client_credentials',
        scope: 'boleto-cobranca.read boleto-cobranca.write cobv.write cobv.read pix.read webhook.read webhook.write',
      },
    });
    expect(token.status).toBe(200);
    expect(token.body.scope.split(' ')).toEqual(
      expect.arrayContaining(['cobv.write', 'cobv.read', 'pix.read', 'webhook.read', 'webhook.write']),
    );
    client.bearer = token.body.access_token;

    const account = { 'x-conta-corrente': integration.account };
    const txid = newTxid();
    const created = await client.call<CobV>('PUT', `/cobv/${txid}`, {
      json: cobvBody(integration.pix_key),
      headers: account,
    });
    expect(created.status).toBe(201);
    conforms('CobVGerada', created.body);
    const other = await client.call('GET', `/cobv/${txid}`, { headers: { 'x-conta-corrente': '999' } });
    expect(other.status).toBe(403);
    // Inter answers the webhook's PUT with 204 (the standard: 200), and names the account in its notices.
    const webhook = await client.call('PUT', `/webhook/${integration.pix_key}`, {
      json: { webhookUrl: receiver.url },
      headers: account,
    });
    expect(webhook.status).toBe(204);
    expect((await sandbox('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix' })).status).toBe(200);
    await eventually(() => expect(receiver.itemsFor(txid)).toHaveLength(1));
    const notice = receiver.received.find((r) => r.body.pix.some((p) => p.txid === txid));
    expect(notice?.headers['x-conta-corrente']).toBe(integration.account.replace(/^0+/, ''));
  });

  it('lists a boleto paid by PIX among the PIX received, with the boleto`s txid, once', async () => {
    const integration = (await sandbox('POST', '/sandbox/inter/integrations')).body as unknown as PixIntegration;
    const base = suite.harness.sandbox.inter!.baseUrl;
    const client = new PixTestClient(`${base}/pix/v2`, ca.certPem, integration);
    clients.push(client);
    const form = {
      client_id: integration.client_id,
      client_secret: integration.client_secret,
      grant_type: 'client_credentials',
    };
    const token = await client.call<{ access_token: string }>('POST', '', {
      url: `${base}/oauth/v2/token`,
      form: { ...form, scope: 'boleto-cobranca.write boleto-cobranca.read pix.read' },
    });
    client.bearer = token.body.access_token;
    const boleto = await client.call<{ codigoSolicitacao: string }>('POST', '', {
      url: `${base}/cobranca/v3/cobrancas`,
      json: emitirBody({ seuNumero: `B${Date.now()}` }),
    });
    expect(boleto.status).toBe(200);
    const codigo = boleto.body.codigoSolicitacao;
    const before = new Date(Date.now() - 60_000).toISOString();
    expect((await sandbox('POST', `/sandbox/charges/${codigo}/pay`, { method: 'pix' })).status).toBe(200);
    const after = new Date(Date.now() + 60_000).toISOString();
    const consulted = await client.call<{ pix: { txid: string } }>('GET', '', {
      url: `${base}/cobranca/v3/cobrancas/${codigo}`,
    });
    for (let look = 0; look < 2; look++) {
      const list = await client.call<{ pix: Pix[] }>('GET', `/pix?inicio=${before}&fim=${after}`);
      expect(list.status).toBe(200);
      expect(list.body.pix).toHaveLength(1);
      expect(list.body.pix[0]).toMatchObject({ txid: consulted.body.pix.txid, valor: '2500.00' });
      conforms('Pix', list.body.pix[0]);
    }
    // Inter's reference names the txid filter txId.
    const filtered = await client.call<{ pix: Pix[] }>('GET', `/pix?inicio=${before}&fim=${after}&txId=${newTxid()}`);
    expect(filtered.body.pix).toEqual([]);
  });
});
