import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { buildDynamicBrCode, MAX_MERCHANT_CITY, MAX_MERCHANT_NAME, toMerchantText } from '../br-code';
import { epochDay } from '../calendar-date';
import type { AccountHolder } from '../../db/inter';
import type { InterFaults } from '../inter/faults';
import { holderOf, type SandboxBank } from '../inter/terms';
import { brasiliaDate } from '../inter/wire';
import { amountDue, cents, DEFAULT_DAYS_PAYABLE_AFTER_DUE } from './amount-due';
import type { CobvRequest, CobvRow, CobvStatus, PixDatabase, PixDb, ReceivedRow, RefundRow } from '../../db/pix';
import { invalid, type Violacao } from './problems';
import { pixView } from './wire';

/** The ISPB the sandbox writes into the end-to-end and return ids it makes up (no real participant). */
const SANDBOX_ISPB = '99999999';
const SANDBOX_E2E_PREFIX = `E${SANDBOX_ISPB}`;
/** The standard's window for a devolução: 90 days after the PIX. */
const REFUND_WINDOW_DAYS = 90;
const MAX_LOCATION = 77;

export type PutResult = { outcome: 'created' | 'revised' | 'unchanged'; row: CobvRow };
export type PayResult =
  | { outcome: 'paid'; row: CobvRow; received: ReceivedRow }
  | { outcome: 'not_open'; row: CobvRow; reason: string }
  | { outcome: 'not_found' };
export type RefundResult =
  | { outcome: 'refunded'; refund: RefundRow; received: ReceivedRow }
  | { outcome: 'refused'; reason: string }
  | { outcome: 'not_found' };

/** A cobv revision asked by PATCH: the fields of CobVRevisada, all optional. */
export type CobvRevision = Partial<CobvRequest> & { status?: string; loc?: unknown };

/**
 * The PIX API's ledger, shared by both dialects: cobvs of the integrations in inter_clients (each with
 * its PIX key, the holder's), the PIX received and their devoluções, webhooks per key and their
 * notices. The faults are the Inter dialect's (one set for the whole bank).
 */
export class PixBank {
  /** Called after a notice is recorded (the sender looks at its queue then). */
  onNotice: () => void = () => undefined;

  constructor(
    private readonly db: PixDb,
    private readonly bank: SandboxBank,
    readonly faults: InterFaults,
    /** Where the sandbox serves locations, host[:port] (its main port). */
    private readonly locationHost: () => string,
  ) {}

  /** Who holds a client's account: its PIX key is the one chave its cobvs and webhooks may name. */
  async holder(clientId: string): Promise<AccountHolder> {
    const client = await this.db
      .selectFrom('inter_clients')
      .select('holder')
      .where('client_id', '=', clientId)
      .executeTakeFirstOrThrow();
    return holderOf(this.bank, client.holder);
  }

  // --- cobv ---------------------------------------------------------------------------------------

  /**
   * PUT /cobv/{txid}: creates the cobv; an existing one sent again as it is stays as it is (a retry is
   * never a second charge), an ATIVA one sent with other fields is revised, any other is refused.
   */
  async put(clientId: string, txid: string, request: CobvRequest, now = new Date()): Promise<PutResult> {
    const holder = await this.holder(clientId);
    const refusals = requestRefusals(request, holder);
    const result = await this.db.transaction().execute(async (trx): Promise<PutResult | Violacao[]> => {
      // One PUT per txid at a time, whoever sends it, so two at once cannot both create.
      await sql`select pg_advisory_xact_lock(hashtext(${`pix-txid|${txid}`}))`.execute(trx);
      const existing = await trx
        .selectFrom('pix_cobv')
        .selectAll()
        .where('txid', '=', txid)
        .forUpdate()
        .executeTakeFirst();
      if (existing && existing.client_id !== clientId) return [txidInUse(txid)];
      if (existing && sameRequest(existing.request, request)) return { outcome: 'unchanged', row: existing };
      if (existing && existing.status !== 'ATIVA')
        return [
          {
            propriedade: 'txid',
            razao: `A cobrança já existe, não está ATIVA (${existing.status}), e a presente requisição busca alterá-la.`,
            valor: txid,
          },
        ];
      const dueRefusal = existing ? [] : dueDateRefusals(request, brasiliaDate(now));
      if (refusals.length + dueRefusal.length > 0) return [...refusals, ...dueRefusal];
      if (existing) return { outcome: 'revised', row: await revise(trx, existing, request) };
      const usedByInter = await trx
        .selectFrom('inter_charges')
        .select('txid')
        .where('txid', '=', txid)
        .executeTakeFirst();
      if (usedByInter) return [txidInUse(txid)];
      return { outcome: 'created', row: await this.insert(trx, clientId, txid, request, holder, now) };
    });
    if (Array.isArray(result)) throw invalid('CobVOperacaoInvalida', result);
    return result;
  }

  private async insert(
    trx: Transaction<PixDatabase>,
    clientId: string,
    txid: string,
    request: CobvRequest,
    holder: AccountHolder,
    now: Date,
  ): Promise<CobvRow> {
    const { value } = (await sql<{ value: number }>`select nextval('pix_loc_seq') as value`.execute(trx)).rows[0];
    // A location is at most 77 characters (the standard's and the BR Code's limit): a long host gets a shorter token.
    const prefix = `${this.locationHost()}/qr/v2/cobv/`;
    const token = randomBytes(16)
      .toString('hex')
      .slice(0, Math.max(16, Math.min(32, MAX_LOCATION - prefix.length)));
    const location = `${prefix}${token}`;
    const brCode = buildDynamicBrCode(
      {
        merchantName: merchantText(holder.name, MAX_MERCHANT_NAME),
        merchantCity: merchantText(holder.city, MAX_MERCHANT_CITY),
      },
      location,
    );
    return trx
      .insertInto('pix_cobv')
      .values({
        txid,
        client_id: clientId,
        revision: 0,
        status: 'ATIVA',
        request: JSON.stringify(request),
        revisions: JSON.stringify([request]),
        chave: request.chave,
        due_date: request.calendario.dataDeVencimento,
        days_payable_after_due: request.calendario.validadeAposVencimento ?? DEFAULT_DAYS_PAYABLE_AFTER_DUE,
        amount_cents: cents(request.valor.original),
        loc_id: Number(value),
        loc_token: token,
        location,
        pix_copy_and_paste: brCode,
        created_at: now,
        loc_created_at: now,
        status_changed_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /**
   * PATCH /cobv/{txid}: revises an ATIVA cobv with the fields sent, or removes it (status
   * REMOVIDA_PELO_USUARIO_RECEBEDOR, and nothing else); null when the client has no such cobv.
   */
  async patch(clientId: string, txid: string, revision: CobvRevision, now = new Date()): Promise<CobvRow | null> {
    const holder = await this.holder(clientId);
    const result = await this.db.transaction().execute(async (trx): Promise<CobvRow | null | Violacao[]> => {
      const row = await trx
        .selectFrom('pix_cobv')
        .selectAll()
        .where('txid', '=', txid)
        .where('client_id', '=', clientId)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return null;
      if (row.status !== 'ATIVA')
        return [
          {
            propriedade: 'txid',
            razao: `A cobrança não está ATIVA (${row.status}), e a presente requisição busca alterá-la.`,
            valor: txid,
          },
        ];
      const { status, loc: _loc, ...fields } = revision;
      if (status !== undefined) {
        if (Object.keys(fields).length > 0)
          return [
            {
              propriedade: 'cobv.status',
              razao:
                'A cobrança está ATIVA, e a presente requisição propõe removê-la juntamente com outras alterações.',
            },
          ];
        return trx
          .updateTable('pix_cobv')
          .set({ status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', status_changed_at: now, revision: row.revision + 1 })
          .where('txid', '=', txid)
          .returningAll()
          .executeTakeFirstOrThrow();
      }
      const merged: CobvRequest = {
        ...row.request,
        ...fields,
        calendario: { ...row.request.calendario, ...fields.calendario },
        valor: { ...row.request.valor, ...fields.valor },
      };
      const refusals = requestRefusals(merged, holder);
      if (refusals.length > 0) return refusals;
      if (sameRequest(row.request, merged)) return row;
      return revise(trx, row, merged);
    });
    if (Array.isArray(result)) throw invalid('CobVOperacaoInvalida', result);
    return result;
  }

  /** A client's cobv; null when it has none with that txid. */
  async find(clientId: string, txid: string): Promise<CobvRow | null> {
    return (
      (await this.db
        .selectFrom('pix_cobv')
        .selectAll()
        .where('txid', '=', txid)
        .where('client_id', '=', clientId)
        .executeTakeFirst()) ?? null
    );
  }

  async byTxid(txid: string): Promise<CobvRow | null> {
    return (await this.db.selectFrom('pix_cobv').selectAll().where('txid', '=', txid).executeTakeFirst()) ?? null;
  }

  async byLocation(token: string): Promise<CobvRow | null> {
    return (await this.db.selectFrom('pix_cobv').selectAll().where('loc_token', '=', token).executeTakeFirst()) ?? null;
  }

  /** GET /cobv: the client's cobvs created in [from, to], oldest first, one page. */
  async list(
    clientId: string,
    query: { from: Date; to: Date; status?: string; page: number; size: number },
  ): Promise<{ rows: CobvRow[]; total: number }> {
    let select = this.db
      .selectFrom('pix_cobv')
      .where('client_id', '=', clientId)
      .where('created_at', '>=', query.from)
      .where('created_at', '<=', query.to);
    if (query.status) select = select.where('status', '=', query.status as CobvStatus);
    const [{ count }] = await select.select((eb) => eb.fn.countAll<string>().as('count')).execute();
    const rows = await select
      .selectAll()
      .orderBy('created_at')
      .orderBy('txid')
      .offset(query.page * query.size)
      .limit(query.size)
      .execute();
    return { rows, total: Number(count) };
  }

  /** The PIX received for these cobvs, and their devoluções. */
  async paymentsOf(txids: string[]): Promise<{ received: ReceivedRow[]; refunds: RefundRow[] }> {
    if (txids.length === 0) return { received: [], refunds: [] };
    const received = await this.db
      .selectFrom('pix_received')
      .selectAll()
      .where('txid', 'in', txids)
      .orderBy('paid_at')
      .execute();
    return { received, refunds: await this.refundsOf(received.map((r) => r.end_to_end_id)) };
  }

  async refundsOf(endToEndIds: string[]): Promise<RefundRow[]> {
    if (endToEndIds.length === 0) return [];
    return this.db
      .selectFrom('pix_refunds')
      .selectAll()
      .where('end_to_end_id', 'in', endToEndIds)
      .orderBy('requested_at')
      .execute();
  }

  // --- webhooks -------------------------------------------------------------------------------------

  async setWebhook(clientId: string, chave: string, url: string): Promise<void> {
    await this.db
      .insertInto('pix_webhooks')
      .values({ client_id: clientId, chave, webhook_url: url })
      .onConflict((oc) => oc.columns(['client_id', 'chave']).doUpdateSet({ webhook_url: url }))
      .execute();
  }

  async webhook(clientId: string, chave: string) {
    return (
      (await this.db
        .selectFrom('pix_webhooks')
        .selectAll()
        .where('client_id', '=', clientId)
        .where('chave', '=', chave)
        .executeTakeFirst()) ?? null
    );
  }

  async deleteWebhook(clientId: string, chave: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('pix_webhooks')
      .where('client_id', '=', clientId)
      .where('chave', '=', chave)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  // --- PIX received and devoluções -----------------------------------------------------------------

  async received(clientId: string, endToEndId: string): Promise<ReceivedRow | null> {
    await this.takeBoletoPayments(clientId);
    return (
      (await this.db
        .selectFrom('pix_received')
        .selectAll()
        .where('client_id', '=', clientId)
        .where('end_to_end_id', '=', endToEndId)
        .executeTakeFirst()) ?? null
    );
  }

  /** GET /pix: the client's PIX received in [from, to] (by the time paid), oldest first, one page. */
  async receivedList(
    clientId: string,
    query: { from: Date; to: Date; txid?: string; page: number; size: number },
  ): Promise<{ rows: ReceivedRow[]; total: number }> {
    await this.takeBoletoPayments(clientId);
    let select = this.db
      .selectFrom('pix_received')
      .where('client_id', '=', clientId)
      .where('paid_at', '>=', query.from)
      .where('paid_at', '<=', query.to);
    if (query.txid) select = select.where('txid', '=', query.txid);
    const [{ count }] = await select.select((eb) => eb.fn.countAll<string>().as('count')).execute();
    const rows = await select
      .selectAll()
      .orderBy('paid_at')
      .orderBy('end_to_end_id')
      .offset(query.page * query.size)
      .limit(query.size)
      .execute();
    return { rows, total: Number(count) };
  }

  /**
   * The client's Inter boletos paid by PIX are PIX received at the bank too, with the boleto's txid:
   * GET /pix lists them beside the cobvs' payments (as a bank does), each once, with an end-to-end id
   * of its own (made from the boleto's codigoSolicitacao, so it is the same on every look).
   */
  private async takeBoletoPayments(clientId: string): Promise<void> {
    const defaultKey = this.bank.account.pix.key;
    await sql`
      insert into pix_received (end_to_end_id, client_id, txid, chave, amount_cents, components, info_pagador, paid_at)
      select ${SANDBOX_E2E_PREFIX} || to_char(ch.paid_at at time zone 'UTC', 'YYYYMMDDHH24MI')
               || substr(replace(ch.codigo_solicitacao::text, '-', ''), 1, 11),
             ch.client_id, ch.txid, coalesce(cl.holder->>'pix_key', ${defaultKey}), ch.amount_paid_cents,
             jsonb_build_object('original', ch.amount_paid_cents, 'multa', 0, 'juros', 0, 'desconto', 0, 'abatimento', 0),
             null, ch.paid_at
        from inter_charges ch join inter_clients cl on cl.client_id = ch.client_id
       where ch.client_id = ${clientId} and ch.payment_origin = 'PIX' and ch.txid is not null
         and ch.paid_at is not null and ch.amount_paid_cents > 0
      on conflict (end_to_end_id) do nothing`.execute(this.db);
  }

  /**
   * Pays an ATIVA cobv on `payDate` (Brasília) with `amountCents` (null: what is due that day): a PIX
   * received, the cobv CONCLUIDA, and its notice.
   */
  async pay(txid: string, amountCents: number | null, payDate: string, at: Date): Promise<PayResult> {
    const result = await this.db.transaction().execute(async (trx): Promise<PayResult & { noticed?: boolean }> => {
      const row = await trx.selectFrom('pix_cobv').selectAll().where('txid', '=', txid).forUpdate().executeTakeFirst();
      if (!row) return { outcome: 'not_found' };
      if (row.status !== 'ATIVA') return { outcome: 'not_open', row, reason: `the cobv is ${row.status}` };
      const due = amountDue(row.request, payDate);
      if (due.outcome === 'past_validity')
        return {
          outcome: 'not_open',
          row,
          reason: `${payDate} is past the cobv's validity (${row.days_payable_after_due} days after ${row.due_date})`,
        };
      const received = await trx
        .insertInto('pix_received')
        .values({
          end_to_end_id: endToEndId('E', at),
          client_id: row.client_id,
          txid,
          chave: row.chave,
          amount_cents: amountCents ?? due.finalCents,
          components: JSON.stringify(due.components),
          info_pagador: null,
          paid_at: at,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const paid = await trx
        .updateTable('pix_cobv')
        .set({ status: 'CONCLUIDA', status_changed_at: at })
        .where('txid', '=', txid)
        .returningAll()
        .executeTakeFirstOrThrow();
      const noticed = await this.notice(trx, received, []);
      return { outcome: 'paid', row: paid, received, noticed };
    });
    if (result.outcome === 'paid' && result.noticed) this.onNotice();
    return result;
  }

  /**
   * A devolução of a received PIX, settled at once (DEVOLVIDO), with its notice; refused beyond the
   * amount received, with an id already used for that PIX, or past the 90-day window.
   */
  async refund(
    clientId: string | null,
    endToEnd: string,
    request: { id: string; amountCents: number; natureza?: string; descricao?: string },
    now = new Date(),
  ): Promise<RefundResult> {
    const result = await this.db.transaction().execute(async (trx): Promise<RefundResult & { noticed?: boolean }> => {
      let select = trx.selectFrom('pix_received').selectAll().where('end_to_end_id', '=', endToEnd);
      if (clientId) select = select.where('client_id', '=', clientId);
      const received = await select.forUpdate().executeTakeFirst();
      if (!received) return { outcome: 'not_found' };
      const earlier = await trx.selectFrom('pix_refunds').selectAll().where('end_to_end_id', '=', endToEnd).execute();
      if (earlier.some((r) => r.id === request.id))
        return {
          outcome: 'refused',
          reason: `A presente requisição de devolução apresenta um id (${request.id}) já utilizado para este e2eid.`,
        };
      const returned = earlier.filter((r) => r.status !== 'NAO_REALIZADO').reduce((sum, r) => sum + r.amount_cents, 0);
      if (returned + request.amountCents > received.amount_cents)
        return { outcome: 'refused', reason: 'A devolução, com as anteriores, excederia o valor do Pix originário.' };
      if (now.getTime() - received.paid_at.getTime() > REFUND_WINDOW_DAYS * 86_400_000)
        return { outcome: 'refused', reason: 'A devolução viola a janela de 90 dias desde a liquidação do Pix.' };
      const refund = await trx
        .insertInto('pix_refunds')
        .values({
          end_to_end_id: endToEnd,
          id: request.id,
          rtr_id: endToEndId('D', now),
          amount_cents: request.amountCents,
          natureza: request.natureza ?? 'ORIGINAL',
          descricao: request.descricao ?? null,
          status: 'DEVOLVIDO',
          requested_at: now,
          settled_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const noticed = await this.notice(trx, received, [...earlier, refund]);
      return { outcome: 'refunded', refund, received, noticed };
    });
    if (result.outcome === 'refunded' && result.noticed) this.onNotice();
    return result;
  }

  async refundOf(clientId: string, endToEnd: string, id: string): Promise<RefundRow | null> {
    const received = await this.received(clientId, endToEnd);
    if (!received) return null;
    return (
      (await this.db
        .selectFrom('pix_refunds')
        .selectAll()
        .where('end_to_end_id', '=', endToEnd)
        .where('id', '=', id)
        .executeTakeFirst()) ?? null
    );
  }

  /** The notices recorded about a cobv's PIX (payments and devoluções), oldest first, with how their delivery went. */
  async noticesOf(txid: string) {
    return this.db
      .selectFrom('pix_notifications')
      .innerJoin('pix_received', 'pix_received.end_to_end_id', 'pix_notifications.end_to_end_id')
      .select([
        'pix_notifications.notification_id',
        'pix_notifications.url',
        'pix_notifications.body',
        'pix_notifications.status',
        'pix_notifications.attempt_count',
        'pix_notifications.last_status_code',
        'pix_notifications.last_error',
        'pix_notifications.next_attempt_at',
      ])
      .where('pix_received.txid', '=', txid)
      .orderBy('pix_notifications.created_at')
      .execute();
  }

  // --- the clock and the notices -------------------------------------------------------------------

  /** A cobv past its validity (validadeAposVencimento days after its due date) is removed by the PSP. */
  async tick(now = new Date()): Promise<void> {
    const today = brasiliaDate(now);
    await this.db
      .updateTable('pix_cobv')
      .set({ status: 'REMOVIDA_PELO_PSP', status_changed_at: now })
      .where('status', '=', 'ATIVA')
      .where(sql<boolean>`(due_date::date + days_payable_after_due) < ${today}::date`)
      .execute();
  }

  /** The sandbox control: the cobv reaches the end of its validity now (REMOVIDA_PELO_PSP). */
  async expire(txid: string, now = new Date()): Promise<CobvRow | null> {
    return (
      (await this.db
        .updateTable('pix_cobv')
        .set({ status: 'REMOVIDA_PELO_PSP', status_changed_at: now })
        .where('txid', '=', txid)
        .where('status', '=', 'ATIVA')
        .returningAll()
        .executeTakeFirst()) ?? null
    );
  }

  /** Records the notice `{ pix: [...] }` of a received PIX (with its devoluções) to the webhook of its key. */
  private async notice(trx: Transaction<PixDatabase>, received: ReceivedRow, refunds: RefundRow[]): Promise<boolean> {
    if (this.faults.drop_webhooks) return false;
    const webhook = await trx
      .selectFrom('pix_webhooks')
      .select('webhook_url')
      .where('client_id', '=', received.client_id)
      .where('chave', '=', received.chave)
      .executeTakeFirst();
    if (!webhook) return false;
    await trx
      .insertInto('pix_notifications')
      .values({
        notification_id: randomUUID(),
        client_id: received.client_id,
        end_to_end_id: received.end_to_end_id,
        url: `${webhook.webhook_url.replace(/\/+$/, '')}/pix`,
        body: JSON.stringify({ pix: [pixView(received, refunds)] }),
        status: 'pending',
        next_attempt_at: new Date(),
      })
      .execute();
    return true;
  }
}

/** A new revision of an ATIVA cobv: the body replaced, the revision one more. */
async function revise(trx: Transaction<PixDatabase>, row: CobvRow, request: CobvRequest): Promise<CobvRow> {
  return trx
    .updateTable('pix_cobv')
    .set({
      request: JSON.stringify(request),
      revisions: JSON.stringify([...row.revisions, request]),
      revision: row.revision + 1,
      due_date: request.calendario.dataDeVencimento,
      days_payable_after_due: request.calendario.validadeAposVencimento ?? DEFAULT_DAYS_PAYABLE_AFTER_DUE,
      amount_cents: cents(request.valor.original),
    })
    .where('txid', '=', row.txid)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Same body, field order aside. */
function sameRequest(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

const txidInUse = (txid: string): Violacao => ({
  propriedade: 'txid',
  razao: 'O txid encontra-se em uso por outra cobrança.',
  valor: txid,
});

/** A due date before today is refused at creation only (a revision may keep a date already past). */
function dueDateRefusals(request: CobvRequest, today: string): Violacao[] {
  const due = request.calendario.dataDeVencimento;
  return due < today
    ? [
        {
          propriedade: 'cobv.calendario.dataDeVencimento',
          razao: 'O campo cobv.calendario.dataDeVencimento é anterior à data de criação da cobrança.',
          valor: due,
        },
      ]
    : [];
}

/** What the standard refuses in a cobv that its schema cannot say (CobVOperacaoInvalida's violations). */
function requestRefusals(request: CobvRequest, holder: AccountHolder): Violacao[] {
  const refusals: Violacao[] = [];
  const refuse = (propriedade: string, razao: string, valor?: string) =>
    refusals.push({ propriedade, razao, ...(valor !== undefined ? { valor } : {}) });
  if (holder.pix_key === null || request.chave !== holder.pix_key)
    refuse(
      'cobv.chave',
      'O campo cobv.chave corresponde a uma conta que não pertence a este usuário recebedor.',
      request.chave,
    );
  const { calendario, valor } = request;
  if ((calendario.validadeAposVencimento ?? 0) < 0)
    refuse(
      'cobv.calendario.validadeAposVencimento',
      'O campo cobv.calendario.validadeAposVencimento é menor do que zero.',
    );
  const original = cents(valor.original);
  if (original === 0)
    refuse('cobv.valor.original', 'O campo cobv.valor.original apresenta o valor zero.', valor.original);
  if (valor.abatimento) {
    const value = cents(valor.abatimento.valorPerc);
    if (valor.abatimento.modalidade === 1 ? value >= original : value >= 10_000)
      refuse(
        'cobv.valor.abatimento',
        'O objeto cobv.valor.abatimento representa um valor maior ou igual ao valor da cobrança original ou maior ou igual a 100%.',
      );
  }
  const discount = valor.desconto;
  if (discount) {
    const fixedDates = discount.modalidade === 1 || discount.modalidade === 2;
    if (fixedDates && discount.valorPerc !== undefined)
      refuse(
        'cobv.valor.desconto.valorPerc',
        'O objeto cobv.valor.desconto apresenta modalidade 1 ou 2, porém valorPerc encontra-se preenchido.',
      );
    if (fixedDates && (discount.descontoDataFixa ?? []).length === 0)
      refuse(
        'cobv.valor.desconto.descontoDataFixa',
        'O objeto cobv.valor.desconto apresenta modalidade 1 ou 2, porém descontoDataFixa está vazio ou nulo.',
      );
    if (!fixedDates && discount.valorPerc === undefined)
      refuse(
        'cobv.valor.desconto.valorPerc',
        'O objeto cobv.valor.desconto apresenta modalidade de 3 a 6, porém valorPerc não está preenchido.',
      );
    if (!fixedDates && discount.descontoDataFixa !== undefined)
      refuse(
        'cobv.valor.desconto.descontoDataFixa',
        'O objeto cobv.valor.desconto apresenta modalidade de 3 a 6, porém descontoDataFixa está preenchido.',
      );
    for (const item of discount.descontoDataFixa ?? []) {
      const value = cents(item.valorPerc);
      if (discount.modalidade === 1 ? value >= original : value >= 10_000)
        refuse(
          'cobv.valor.desconto',
          'Um elemento de desconto representa um valor maior ou igual ao valor da cobrança original ou maior ou igual a 100%.',
          item.valorPerc,
        );
      if (epochDay(item.data) > epochDay(calendario.dataDeVencimento))
        refuse('cobv.valor.desconto', 'Um elemento de desconto tem data posterior à data de vencimento.', item.data);
    }
  }
  return refusals;
}

/** An end-to-end id (E) or a return id (D): letter, ISPB, yyyyMMddHHmm (UTC), 11 letters or digits; 32 in all. */
export function endToEndId(kind: 'E' | 'D', at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  const tail = randomBytes(11)
    .toString('base64')
    .replace(/[^a-zA-Z0-9]/g, '')
    .padEnd(11, 'x')
    .slice(0, 11);
  return `${kind}${SANDBOX_ISPB}${stamp}${tail}`;
}

function merchantText(value: string, max: number): string {
  return toMerchantText(value).slice(0, max).trim() || 'SANDBOX';
}
