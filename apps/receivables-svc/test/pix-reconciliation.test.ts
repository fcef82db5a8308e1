import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import type { ProviderKind } from '@payments/contracts';
import { PIX_DIALECTS, standardViolations, txidFor } from '@payments/pix-api';
import type { ReceivableRow } from '../src/db/schema';
import { applyDueNotices } from '../src/domain/notices';
import { storeNotices } from '../src/db/notice-store';
import type { PaymentProviders, ProviderAccount, SweepResult, SweepWindow } from '../src/domain/ports';
import { MAX_PIX_LIST_PAGES, sweepPix, type PixApiReader } from '../src/transport/providers/pix/sweep';
import { parsePixWebhook } from '../src/transport/providers/pix/webhook';
import {
  acceptAndRegister,
  callbacksFor,
  chargeItem,
  history,
  noticesDueNow,
  PixBank,
  reconcileAllNow,
  rowById,
  TZ,
  useStateFixture,
  type StateFixture,
} from './state-fixture';

// Reconciliation of PIX charges: sweepPix reads the bank's received-PIX list (GET /pix?inicio&fim,
// paged) and its removed cobvs (GET /cobv?inicio&fim&status) over HTTP, and the reconciler and the
// notice worker apply what it finds as they run in the service, against a real Postgres. The bank here
// is a double of those two lists only, answering in the standard's shapes (each answer is checked
// against the standard's own schema before it is sent) with a small page size, so paging is read.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

interface ListedPix {
  endToEndId: string;
  txid?: string;
  valor: string;
  horario: string;
  devolucoes?: unknown[];
}

/** The bank's two lists, served as the standard writes them. */
class PixListBank {
  readonly received: ListedPix[] = [];
  readonly removed: Array<{ txid: string; status: string; criacao: string }> = [];
  readonly requests: URL[] = [];
  /** Answers the double would have sent off the standard (each test expects none). */
  readonly offStandard: string[] = [];
  /** The PSP's own page size (the standard lets it answer fewer items than asked for). */
  pageSize = 2;
  private server: Server | null = null;
  root = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://bank.test');
      this.requests.push(url);
      const answer = this.answer(url);
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.root = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private answer(url: URL): { status: number; body: unknown } {
    const inicio = new Date(url.searchParams.get('inicio') ?? '');
    const fim = new Date(url.searchParams.get('fim') ?? '');
    const page = Number(url.searchParams.get('paginacao.paginaAtual') ?? '0');
    const size = Math.min(this.pageSize, Number(url.searchParams.get('paginacao.itensPorPagina') ?? '100'));
    const within = (at: string) => new Date(at) >= inicio && new Date(at) <= fim;
    const parametros = (total: number) => ({
      inicio: inicio.toISOString(),
      fim: fim.toISOString(),
      paginacao: {
        paginaAtual: page,
        itensPorPagina: size,
        quantidadeDePaginas: Math.max(1, Math.ceil(total / size)),
        quantidadeTotalDeItens: total,
      },
    });
    if (url.pathname === '/pix') {
      const all = this.received.filter((p) => within(p.horario));
      return this.checked('PixConsultados', {
        parametros: parametros(all.length),
        pix: all.slice(page * size, (page + 1) * size),
      });
    }
    if (url.pathname === '/cobv') {
      const status = url.searchParams.get('status');
      const all = this.removed.filter((c) => within(c.criacao) && (status === null || c.status === status));
      return this.checked('CobsVConsultadas', {
        parametros: parametros(all.length),
        cobs: all.slice(page * size, (page + 1) * size).map((c) => cobv(c.txid, c.status, c.criacao)),
      });
    }
    return {
      status: 404,
      body: { type: 'https://pix.bcb.gov.br/api/v2/error/NaoEncontrado', title: 'Not Found', status: 404 },
    };
  }

  /** The double answers only what the standard's schema accepts: a shape of ours would prove nothing. */
  private checked(schema: string, body: unknown): { status: number; body: unknown } {
    const violations = standardViolations(schema, body);
    if (violations.length === 0) return { status: 200, body };
    this.offStandard.push(`${schema}: ${JSON.stringify(violations)}`);
    return { status: 500, body: { title: 'the test bank is off the standard', status: 500 } };
  }

  /** The sweep's connection to this bank: GET under its root, the 2xx body. */
  reader(): PixApiReader {
    return {
      dialect: PIX_DIALECTS.standard,
      get: async (path, query) => {
        const res = await fetch(`${this.root}${path}?${new URLSearchParams(query)}`);
        if (res.status !== 200) throw new Error(`bank answered ${res.status}`);
        return res.json() as Promise<unknown>;
      },
    };
  }
}

/** A cobv as GET /cobv lists it (CobVCompleta, with the list's required idCob). */
function cobv(txid: string, status: string, criacao: string) {
  return {
    idCob: `cob-${txid}`,
    txid,
    revisao: 0,
    status,
    calendario: { criacao, dataDeVencimento: '2026-12-15', validadeAposVencimento: 60 },
    loc: { id: 7, location: `pix.example.com/qr/v2/cobv/${txid}`, tipoCob: 'cobv', criacao },
    location: `pix.example.com/qr/v2/cobv/${txid}`,
    devedor: { cpf: '52998224725', nome: 'Maria da Silva' },
    recebedor: {
      cnpj: '11222333000181',
      nome: 'Escola',
      logradouro: 'Rua XV de Novembro, 100',
      cidade: 'Curitiba',
      uf: 'PR',
      cep: '80020310',
    },
    valor: { original: '150.75' },
    chave: 'pix@example.com',
  };
}

/** ... whose `sweep` is sweepPix reading the list bank over HTTP (sandbox accounts have none: not swept). */
class SweptPixBank extends PixBank {
  readonly sweeps: SweepResult[] = [];
  readonly windows: SweepWindow[] = [];
  constructor(private readonly lists: PixListBank) {
    super();
  }
  async sweep(_account: ProviderAccount, window: SweepWindow): Promise<SweepResult> {
    this.windows.push(window);
    const result = await sweepPix(this.lists.reader(), window);
    this.sweeps.push(result);
    return result;
  }
}

let lists: PixListBank;
let bank: SweptPixBank;
let providers: PaymentProviders;

beforeAll(async () => {
  lists = new PixListBank();
  await lists.start();
  bank = new SweptPixBank(lists);
  providers = { sandbox: new PixBank(), inter: bank, pix: bank };
});
afterAll(async () => {
  await lists?.stop();
});

afterEach(() => {
  expect(lists.offStandard).toEqual([]);
});

beforeEach(async () => {
  // Each test sweeps only its own charges: earlier tests' accounts have nothing open any more.
  await f.db.updateTable('receivables').set({ state: 'cancelled' }).where('state', '=', 'pending').execute();
  lists.received.length = 0;
  lists.removed.length = 0;
  lists.requests.length = 0;
  lists.offStandard.length = 0;
  lists.pageSize = 2;
});

/** A charge registered under a `provider` account: of a new tenant, or of `sibling`'s tenant and account. */
async function registered(
  provider: ProviderKind = 'pix',
  paymentMethod: 1 | 3 = 3,
  sibling?: ReceivableRow,
): Promise<ReceivableRow> {
  const tenantId = sibling?.tenant_id ?? randomUUID();
  const item = chargeItem(f.clients.add(tenantId), { payment_method: paymentMethod });
  return acceptAndRegister(f, providers, tenantId, f.accountFor(tenantId, provider), item);
}

/** One reconciliation round as the service runs it (every account due), then the notice worker. */
async function reconcileAndApply(): Promise<void> {
  await reconcileAllNow(f, providers);
  await applyDueNotices({ db: f.db, providers, accounts: f.accounts, timeZone: TZ, logger: f.logger }, 500);
}

const e2eid = () => `E00416968202611241314${randomBytes(6).toString('hex').slice(0, 11)}`;
const reais = (cents: number) => (cents / 100).toFixed(2);
/** A minute ago, at the bank: inside the sweep's window. */
const justNow = () => new Date(Date.now() - 60_000).toISOString();

function received(txid: string | undefined, valor: string, devolucoes?: unknown[]): ListedPix {
  return {
    endToEndId: e2eid(),
    ...(txid ? { txid } : {}),
    valor,
    horario: justNow(),
    ...(devolucoes ? { devolucoes } : {}),
  };
}

async function noticesOf(chargeId: string) {
  return f.db.selectFrom('bank_notice_log').selectAll().where('charge_id', '=', chargeId).orderBy('id').execute();
}

describe('PIX reconciliation: the received-PIX list and the removed cobvs', () => {
  it('finds a payment whose notice was lost, with the amount and instant the list gives, reading every page, once', async () => {
    const r = await registered();
    const txid = txidFor(r.id);
    // Other PIX of the account around it (paid to the key, another system's charge): pages to read through.
    lists.received.push(
      received(undefined, '5.00'),
      received('SOMEOTHERSYSTEMTXID0000000000001', '7.00'),
      received(undefined, '9.00'),
      received(txid, '151.02'),
      received(undefined, '3.00'),
    );
    await reconcileAndApply();

    const paid = await rowById(f, r.id);
    expect(paid).toMatchObject({ state: 'approved', payment_type: 'pix' });
    expect(Number(paid.amount_paid_cents)).toBe(15_102); // the bank's amount (a late payment's interest included)
    expect(paid.payment_date?.toISOString()).toBe(lists.received[3]?.horario);
    expect(bank.consultCalls).toEqual([]); // the list is the bank's word: no consult
    const listed = lists.requests.filter((u) => u.pathname === '/pix');
    expect(listed.map((u) => u.searchParams.get('paginacao.paginaAtual'))).toEqual(['0', '1', '2']);
    // From 00:00 Brasília of the window's first payment day.
    const window = bank.windows.at(-1);
    expect(listed[0]?.searchParams.get('inicio')).toBe(new Date(`${window?.paidFrom}T00:00:00-03:00`).toISOString());
    expect(await noticesOf(txid)).toEqual([
      expect.objectContaining({ source: 'list', verified: true, outcome: 'approved' }),
    ]);

    await reconcileAndApply(); // the next sweep sees it again: nothing new
    expect(await noticesOf(txid)).toHaveLength(1);
    expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid')).toHaveLength(1);
    expect((await history(f, r.id)).filter((h) => h.to_state === 'approved')).toEqual([
      {
        from_state: 'pending',
        to_state: 'approved',
        reason: 'paid by pix; 151.02 received, above the amount due of 150.75',
      },
    ]);
  });

  it('counts a payment seen by the webhook and by the list once', async () => {
    const r = await registered('inter');
    const txid = txidFor(r.id);
    const payment = received(txid, reais(Number(r.amount_cents)));
    // The webhook's notice is stored; the cobv's consult does not show the payment yet.
    await storeNotices(
      f.db,
      await f.accounts.forReceivable(r.provider_account_id),
      'webhook',
      parsePixWebhook(JSON.stringify({ pix: [payment] })),
    );
    lists.received.push(payment);
    await reconcileAndApply();
    expect((await rowById(f, r.id)).state).toBe('approved');

    bank.states.set(txid, {
      kind: 'paid',
      payment: {
        paidAt: new Date(payment.horario),
        amountPaidCents: Number(r.amount_cents),
        feeCents: 0,
        method: 'pix',
      },
    });
    await noticesDueNow(f);
    await applyDueNotices({ db: f.db, providers, accounts: f.accounts, timeZone: TZ, logger: f.logger });
    expect((await noticesOf(txid)).map((n) => [n.source, n.outcome])).toEqual(
      expect.arrayContaining([
        ['list', 'approved'],
        ['webhook', expect.stringMatching(/^(already_paid|duplicate)$/)],
      ]),
    );
    expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid')).toHaveLength(1);
  });

  it("leaves a boleto's PIX payment in the list to the boleto: nothing is stored or applied to any cobv", async () => {
    const boleto = await registered('inter', 1);
    const pixCharge = await registered('inter', 3);
    // An Inter boleto paid by PIX: the list shows it under the boleto's own txid (the bank's, not txidFor's).
    lists.received.push(received(`INTERBOLEPIX${randomBytes(8).toString('hex')}`, reais(Number(boleto.amount_cents))));
    await reconcileAndApply();
    expect((await rowById(f, boleto.id)).state).toBe('pending');
    expect((await rowById(f, pixCharge.id)).state).toBe('pending');
    const stored = await f.db
      .selectFrom('bank_notice_log')
      .select('charge_id')
      .where('charge_id', 'in', [boleto.provider_charge_id ?? '', txidFor(pixCharge.id)])
      .execute();
    expect(stored).toEqual([]);
    expect(
      await f.db.selectFrom('bank_notice_log').selectAll().where('outcome', '=', 'unknown_charge').execute(),
    ).toEqual([]);
  });

  it('writes a devolução the list shows once it is settled, once, however often it is swept', async () => {
    const r = await registered('inter');
    await registered('inter', 3, r); // an open charge of the same account: the account is swept each round
    const txid = txidFor(r.id);
    const devolucao = {
      id: 'DEV1',
      rtrId: `D00416968202611251000${randomBytes(6).toString('hex').slice(0, 11)}`,
      valor: '50.00',
      horario: { solicitacao: justNow() },
      status: 'EM_PROCESSAMENTO',
    };
    lists.received.push(received(txid, reais(Number(r.amount_cents)), [devolucao]));
    const sweptBefore = bank.windows.length;
    await reconcileAndApply();
    expect((await rowById(f, r.id)).state).toBe('approved');
    const devolucoes = async () => (await history(f, r.id)).filter((h) => h.reason.startsWith('devolução'));
    expect(await devolucoes()).toEqual([]); // in process at the bank: not written yet

    Object.assign(devolucao, { status: 'DEVOLVIDO', horario: { ...devolucao.horario, liquidacao: justNow() } });
    await reconcileAndApply();
    await reconcileAndApply();
    const after = await rowById(f, r.id);
    expect(after.state).toBe('approved');
    expect(Number(after.amount_paid_cents)).toBe(Number(r.amount_cents));
    expect(await devolucoes()).toEqual([
      {
        from_state: 'approved',
        to_state: 'approved',
        reason: 'devolução DEV1 of R$ 50,00 at the bank, status DEVOLVIDO',
      },
    ]);
    expect(bank.windows.length - sweptBefore).toBe(3);
  });

  it('cancels a cobv the bank removed (expired: REMOVIDA_PELO_PSP), once', async () => {
    const r = await registered();
    const txid = txidFor(r.id);
    lists.removed.push({ txid, status: 'REMOVIDA_PELO_PSP', criacao: justNow() });
    await reconcileAndApply();
    expect((await rowById(f, r.id)).state).toBe('cancelled');
    expect((await history(f, r.id)).at(-1)).toMatchObject({ from_state: 'pending', to_state: 'cancelled' });
    expect((await history(f, r.id)).at(-1)?.reason).toContain('REMOVIDA_PELO_PSP');
    const asked = lists.requests.filter((u) => u.pathname === '/cobv').map((u) => u.searchParams.get('status'));
    expect(asked).toEqual(expect.arrayContaining(['REMOVIDA_PELO_PSP', 'REMOVIDA_PELO_USUARIO_RECEBEDOR']));
    expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.cancelled')).toHaveLength(1);
  });

  it(`stops a long list after ${MAX_PIX_LIST_PAGES} pages and says the sweep is incomplete`, async () => {
    await registered();
    lists.pageSize = 1;
    for (let i = 0; i < MAX_PIX_LIST_PAGES + 3; i += 1) lists.received.push(received(undefined, '1.00'));
    await reconcileAndApply();
    expect(lists.requests.filter((u) => u.pathname === '/pix')).toHaveLength(MAX_PIX_LIST_PAGES);
    expect(bank.sweeps.at(-1)?.complete).toBe(false);
  });
});
