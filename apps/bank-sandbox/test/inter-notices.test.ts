import { sql } from 'kysely';
import { createDatabase } from '@payments/db';
import { eventually, noticeSuite } from './harness';
import { InterTestClient, NoticeReceiver, type TestIntegration } from './inter-client';
import {
  callbackAttemptPage,
  callbackBody,
  emitirBody,
  problema,
  referenceProblems,
  retryCallbackResponse,
} from './inter-reference';

/**
 * The Inter dialect's notices and faults, over mutual TLS: notices for issue, payment, cancellation
 * and expiry (an array of CallbackCobranca), a refused one retried on Inter's schedule (shortened
 * here by BANK_SANDBOX_INTER_NOTICE_RETRY_MS), the callback history and its retry; the faults of
 * POST /sandbox/inter/faults. The oracle is Inter's reference as ./inter-reference.ts transcribes it.
 */

const RETRY_MS = [100, 200, 400, 800];
const receiver = new NoticeReceiver();
const suite = noticeSuite({
  caName: 'Inter notices test CA',
  retryMs: RETRY_MS,
  receiver,
  faultsPath: '/sandbox/inter/faults',
});
const { ca, clients, sandbox } = suite;

/** A new integration, logged in, its webhook set to the receiver. */
async function subscribed(): Promise<InterTestClient> {
  const integration = (await sandbox('POST', '/sandbox/inter/integrations')).body as unknown as TestIntegration;
  const client = new InterTestClient(suite.harness.sandbox.inter!.baseUrl, ca.certPem, integration);
  clients.push(client);
  expect((await client.login()).status).toBe(200);
  const put = await client.call('PUT', '/cobranca/v3/cobrancas/webhook', { json: { webhookUrl: receiver.url } });
  expect(put.status).toBe(204);
  return client;
}

async function created(client: InterTestClient, overrides: Record<string, unknown> = {}): Promise<string> {
  const answer = await client.create(
    emitirBody({ seuNumero: `N${Math.random().toString(36).slice(2, 12)}`, ...overrides }),
  );
  expect(answer.status).toBe(200);
  return (answer.body as { codigoSolicitacao: string }).codigoSolicitacao;
}

function history(client: InterTestClient, query: string) {
  const from = new Date(Date.now() - 3_600_000).toISOString();
  const to = new Date(Date.now() + 3_600_000).toISOString();
  return client.call(
    'GET',
    `/cobranca/v3/cobrancas/webhook/callbacks?dataHoraInicio=${from}&dataHoraFim=${to}&${query}`,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('notices', () => {
  it('notices the issue (A_RECEBER) and a payment below the amount due (RECEBIDO, the amount paid, its time and origin)', async () => {
    const client = await subscribed();
    const codigo = await created(client, { valorNominal: 150 });
    await eventually(() => expect(receiver.itemsFor(codigo).map((i) => i.situacao)).toEqual(['A_RECEBER']));
    const before = Date.now();
    expect((await sandbox('POST', `/sandbox/charges/${codigo}/pay`, { method: 'pix', amount: 149.9 })).status).toBe(
      200,
    );
    await eventually(() => expect(receiver.itemsFor(codigo).map((i) => i.situacao)).toEqual(['A_RECEBER', 'RECEBIDO']));
    const deliveries = receiver.received.filter((r) =>
      (r.body as Array<{ codigoSolicitacao: string }>).some((i) => i.codigoSolicitacao === codigo),
    );
    for (const delivery of deliveries) {
      expect(referenceProblems(callbackBody, delivery.body)).toEqual([]);
      expect(delivery.headers['x-conta-corrente']).toBe(client.integration.account);
    }
    const paid = receiver.itemsFor(codigo)[1];
    expect(paid).toMatchObject({ valorTotalRecebido: '149.90', origemRecebimento: 'PIX', codigoSolicitacao: codigo });
    expect(Date.parse(String(paid.dataHoraSituacao))).toBeGreaterThanOrEqual(before - 1_000);
    expect(paid.nossoNumero).toMatch(/^\d{11}$/);
  });

  it('notices the issuer`s cancel in the bank`s app (CANCELADO) and an expiry (EXPIRADO)', async () => {
    const client = await subscribed();
    const [toCancel, toExpire] = [await created(client), await created(client)];
    const cancel = await sandbox('POST', `/sandbox/inter/charges/${toCancel}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ cobranca: { codigoSolicitacao: toCancel, situacao: 'CANCELADO' } });
    expect((await sandbox('POST', `/sandbox/inter/charges/${toCancel}/cancel`)).status).toBe(200);
    const expire = await sandbox('POST', `/sandbox/inter/charges/${toExpire}/expire`);
    expect(expire.status).toBe(200);
    await eventually(() => {
      expect(receiver.itemsFor(toCancel).map((i) => i.situacao)).toEqual(['A_RECEBER', 'CANCELADO']);
      expect(receiver.itemsFor(toExpire).map((i) => i.situacao)).toEqual(['A_RECEBER', 'EXPIRADO']);
    });
    // Neither can be paid any more.
    expect((await sandbox('POST', `/sandbox/charges/${toCancel}/pay`, { method: 'boleto' })).status).toBe(409);
    expect((await sandbox('POST', `/sandbox/charges/${toExpire}/pay`, { method: 'boleto' })).status).toBe(409);
  });

  it('lets a charge expire numDiasAgenda days after its due date by the bank`s clock, with its EXPIRADO notice', async () => {
    const client = await subscribed();
    const codigo = await created(client, { numDiasAgenda: 2 });
    // Time passes at the bank: its due date was three days ago (a create cannot say so).
    const db = createDatabase<unknown>({ url: suite.harness.databaseUrl, schema: 'bank_sandbox' });
    try {
      // Three days before the bank's today, in Brasília: Postgres's current_date is UTC's, a day ahead
      // from 21:00 to midnight in Brasília.
      await sql`update inter_charges set due_date = ((now() at time zone 'America/Sao_Paulo')::date - 3)::text
        where codigo_solicitacao = ${codigo}`.execute(db);
    } finally {
      await db.destroy();
    }
    await eventually(() => expect(receiver.itemsFor(codigo).map((i) => i.situacao)).toEqual(['A_RECEBER', 'EXPIRADO']));
    expect(((await client.consult(codigo)).body as { cobranca: { situacao: string } }).cobranca.situacao).toBe(
      'EXPIRADO',
    );
  });

  it('retries a refused notice on Inter`s schedule, 4 times, then gives up; the history shows every attempt', async () => {
    const client = await subscribed();
    receiver.script.push(500, 500, 500, 500, 500, 500);
    const codigo = await created(client);
    await eventually(() => expect(receiver.itemsFor(codigo)).toHaveLength(5), 10_000);
    await sleep(RETRY_MS[RETRY_MS.length - 1] + 300);
    expect(receiver.itemsFor(codigo)).toHaveLength(5); // the first attempt and 4 retries
    const times = receiver.received
      .filter((r) => (r.body as Array<{ codigoSolicitacao: string }>)[0].codigoSolicitacao === codigo)
      .map((r) => r.at);
    RETRY_MS.forEach((delay, i) => expect(times[i + 1] - times[i]).toBeGreaterThanOrEqual(delay - 20));

    const page = await eventually(async () => {
      const answer = await history(client, `codigoSolicitacao=${codigo}`);
      expect((answer.body as { data?: unknown[] }).data).toHaveLength(5);
      return answer;
    });
    expect(page.status).toBe(200);
    expect(referenceProblems(callbackAttemptPage, page.body)).toEqual([]);
    const attempts = (page.body as { data: Array<Record<string, unknown>> }).data;
    // Newest first ("ordenado pela data de disparo (decrescente)").
    expect(attempts.map((a) => a.numeroTentativa)).toEqual([5, 4, 3, 2, 1]);
    expect(attempts.every((a) => a.sucesso === false && a.httpStatus === 500 && a.webhookUrl === receiver.url)).toBe(
      true,
    );
  });

  it('pages the callback history and retries callbacks on request (RetryCallbackResponse foundIds)', async () => {
    const client = await subscribed();
    const codigos: string[] = [];
    for (let i = 0; i < 11; i += 1) codigos.push(await created(client));
    await eventually(() => codigos.forEach((c) => expect(receiver.itemsFor(c)).toHaveLength(1)));
    // An attempt is written once its POST is answered: the receiver may hold the last body a moment before.
    const first = await eventually(async () => {
      const page = await history(client, 'tamanhoPagina=10');
      expect(page.body).toMatchObject({ totalElementos: 11 });
      return page;
    });
    expect(first.body).toMatchObject({
      totalElementos: 11,
      totalPaginas: 2,
      primeiraPagina: true,
      ultimaPagina: false,
    });
    expect((first.body as { data: unknown[] }).data).toHaveLength(10);
    const second = await history(client, 'tamanhoPagina=10&pagina=1');
    expect(second.body).toMatchObject({ primeiraPagina: false, ultimaPagina: true });
    expect((second.body as { data: unknown[] }).data).toHaveLength(1);
    const tooBig = await history(client, 'tamanhoPagina=51');
    expect(tooBig.status).toBe(400);
    expect(referenceProblems(problema, tooBig.body)).toEqual([]);

    const retry = await client.call('POST', '/cobranca/v3/cobrancas/webhook/callbacks/retry', {
      json: { codigoSolicitacao: [codigos[0], '00000000-0000-4000-8000-000000000000'] },
    });
    expect(retry.status).toBe(200);
    expect(referenceProblems(retryCallbackResponse, retry.body)).toEqual([]);
    expect(retry.body).toEqual({ foundIds: [codigos[0]] });
    await eventually(() => expect(receiver.itemsFor(codigos[0])).toHaveLength(2));
    const none = await client.call('POST', '/cobranca/v3/cobrancas/webhook/callbacks/retry', {
      json: { codigoSolicitacao: ['00000000-0000-4000-8000-000000000000'] },
    });
    expect(none.status).toBe(404);
  });
});

describe('faults', () => {
  it('POST /sandbox/inter/faults answers all of them; DELETE clears them', async () => {
    const set = await sandbox('POST', '/sandbox/inter/faults', { drop_webhooks: true });
    expect(set).toEqual({
      status: 200,
      body: { consult_not_found_ms: 0, rate_limit_per_minute: null, drop_webhooks: true, no_pix_key: false },
    });
    expect((await sandbox('POST', '/sandbox/inter/faults', { drop_webhooks: 'yes' })).status).toBe(422);
    expect((await sandbox('POST', '/sandbox/inter/faults', { nonsense: 1 })).status).toBe(422);
    const cleared = await sandbox('DELETE', '/sandbox/inter/faults');
    expect(cleared.body).toEqual({
      consult_not_found_ms: 0,
      rate_limit_per_minute: null,
      drop_webhooks: false,
      no_pix_key: false,
    });
  });

  it('consult_not_found_ms: a consult answers 404 for that long after the create, then the charge', async () => {
    const client = await subscribed();
    await sandbox('POST', '/sandbox/inter/faults', { consult_not_found_ms: 800 });
    const codigo = await created(client);
    const early = await client.consult(codigo);
    expect(early.status).toBe(404);
    expect(referenceProblems(problema, early.body)).toEqual([]);
    await sleep(850);
    expect((await client.consult(codigo)).status).toBe(200);
  });

  it('rate_limit_per_minute: 429 with Retry-After beyond it, per endpoint; the calls are counted', async () => {
    const client = await subscribed();
    const codigo = await created(client);
    await sandbox('POST', '/sandbox/inter/faults', { rate_limit_per_minute: 3 });
    const statuses: number[] = [];
    let refused: { status: number; body: unknown; headers: Record<string, unknown> } | null = null;
    for (let i = 0; i < 5; i += 1) {
      const answer = await client.consult(codigo);
      statuses.push(answer.status);
      if (answer.status === 429) refused = answer;
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(referenceProblems(problema, refused?.body)).toEqual([]);
    const retryAfter = Number(refused?.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another endpoint has a budget of its own.
    expect((await client.call('GET', '/cobranca/v3/cobrancas/webhook')).status).toBe(200);

    const calls = await sandbox('GET', `/sandbox/inter/calls?client_id=${client.integration.client_id}`);
    expect(calls.status).toBe(200);
    expect(calls.body).toMatchObject({
      client_id: client.integration.client_id,
      endpoints: {
        consult: { total: 5, max_per_minute: 5, refused: 2, inter_limit_per_minute: 120 },
        create: { total: 1 },
        token: { total: 1, inter_limit_per_minute: 5 },
        webhook_put: { total: 1, inter_limit_per_minute: 5 },
      },
    });
  });

  it('drop_webhooks: no notice is sent, none is in the history; no_pix_key: boletos without PIX', async () => {
    const client = await subscribed();
    await sandbox('POST', '/sandbox/inter/faults', { drop_webhooks: true, no_pix_key: true });
    const codigo = await created(client);
    expect((await sandbox('POST', `/sandbox/charges/${codigo}/pay`, { method: 'boleto' })).status).toBe(200);
    const view = (await client.consult(codigo)).body as { cobranca: { situacao: string }; pix?: unknown };
    expect(view.cobranca.situacao).toBe('RECEBIDO');
    expect(view.pix).toBeUndefined();
    await sleep(300);
    expect(receiver.itemsFor(codigo)).toEqual([]);
    expect((await history(client, `codigoSolicitacao=${codigo}`)).body).toMatchObject({ totalElementos: 0, data: [] });
  });

  it('BANK_SANDBOX_INTER_ENFORCE_LIMITS: 429 past Inter`s production limits (the token endpoint: 5 a minute)', async () => {
    await suite.harness.restart({ BANK_SANDBOX_INTER_ENFORCE_LIMITS: 'true' });
    try {
      const integration = (await sandbox('POST', '/sandbox/inter/integrations')).body as unknown as TestIntegration;
      const client = new InterTestClient(suite.harness.sandbox.inter!.baseUrl, ca.certPem, integration);
      clients.push(client);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1) statuses.push((await client.login()).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await suite.harness.restart();
    }
  });
});
