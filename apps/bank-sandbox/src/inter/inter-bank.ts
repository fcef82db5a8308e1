import { createHash, randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { CreateChargeRequest, ListChargesQuery } from '@payments/inter-cobranca';
import { toCents } from '@payments/br-format';
import { buildBarcode, typeableLineFromBarcode } from '../domain/barcode';
import { buildBrCode } from '../domain/br-code';
import { buildFreeField } from '../domain/free-field';
import { formatOurNumber } from '../domain/slip-issuer';
import type { AccountHolder, InterChargeRow, InterClientRow, InterDatabase, InterDb } from './db';
import { clientAccount, clientPayee, holderOf, type SandboxBank } from './terms';
import { brasiliaDate, effectiveSituation, webhookItem } from './wire';

export const TOKEN_TTL_SECONDS = 3_600;

/** Controls that change how the next request is answered (POST /sandbox/inter/behaviour); in memory. */
export interface InterBehaviour {
  /** The next create stores the charge, then waits this long before answering (once). */
  slowOnceMs: number;
  /** The next created charge ends in FALHA_EMISSAO instead of being issued (once). */
  failIssueOnce: boolean;
  /** How long a new charge stays EM_PROCESSAMENTO (0: issued before the create answers). */
  issueDelayMs: number;
}

export type PaymentMethod = 'boleto' | 'pix' | 'manual';

export type CancelResult = 'cancelled' | 'not_open' | 'not_found';
export type PayResult =
  | { outcome: 'paid'; charge: InterChargeRow; notified: boolean }
  | { outcome: 'not_open'; charge: InterChargeRow }
  | { outcome: 'not_found' };

/** What POST /sandbox/charges/{id}/pay names: one Inter charge, several (ambiguous), or none. */
export type PayTarget =
  | { kind: 'inter'; codigoSolicitacao: string }
  | { kind: 'ambiguous'; candidates: Array<{ client_id: string; codigo_solicitacao: string }> }
  | { kind: 'none' };

/**
 * The Inter dialect's ledger: API clients (each an account with its own nossoNumero sequence), their
 * tokens, charges and payment webhooks. Charges are created EM_PROCESSAMENTO and issued (nossoNumero,
 * barcode, BR Code) on the first look after their issue time, so creation is asynchronous as at Inter.
 */
export class InterBank {
  readonly behaviour: InterBehaviour;

  constructor(
    private readonly db: InterDb,
    private readonly bank: SandboxBank,
    issueDelayMs: number,
  ) {
    this.behaviour = { slowOnceMs: 0, failIssueOnce: false, issueDelayMs };
  }

  // --- clients and tokens -------------------------------------------------------------------------

  /** The client's row, created on first sight with an account number of its own. */
  async client(clientId: string): Promise<InterClientRow> {
    await sql`insert into inter_clients (client_id, account)
              values (${clientId}, lpad(nextval('inter_account_seq')::text, 7, '0'))
              on conflict (client_id) do nothing`.execute(this.db);
    return this.db.selectFrom('inter_clients').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();
  }

  /** Client credentials: the first secret presented for a client_id is the one it keeps (sandbox). */
  async checkSecret(clientId: string, secret: string): Promise<boolean> {
    const digest = sha256(secret);
    const client = await this.client(clientId);
    if (client.secret_sha256 === null) {
      await this.db
        .updateTable('inter_clients')
        .set({ secret_sha256: digest })
        .where('client_id', '=', clientId)
        .where('secret_sha256', 'is', null)
        .execute();
      const after = await this.client(clientId);
      return after.secret_sha256 === digest;
    }
    return client.secret_sha256 === digest;
  }

  async issueToken(clientId: string, certFingerprint: string, scopes: string[]): Promise<string> {
    const token = randomUUID();
    await this.db
      .insertInto('inter_tokens')
      .values({
        token,
        client_id: clientId,
        cert_fingerprint: certFingerprint,
        scopes: scopes.join(' '),
        expires_at: new Date(Date.now() + TOKEN_TTL_SECONDS * 1_000),
      })
      .execute();
    return token;
  }

  /** The client a bearer token stands for, when it is valid and used over the certificate it was issued over. */
  async authenticate(token: string, certFingerprint: string): Promise<{ clientId: string; scopes: string[] } | null> {
    const row = await this.db
      .selectFrom('inter_tokens')
      .selectAll()
      .where('token', '=', token)
      .where('expires_at', '>', new Date())
      .executeTakeFirst();
    if (!row || row.cert_fingerprint !== certFingerprint) return null;
    return { clientId: row.client_id, scopes: row.scopes.split(' ') };
  }

  async setNextOurNumber(clientId: string, value: number): Promise<InterClientRow> {
    await this.client(clientId);
    return this.db
      .updateTable('inter_clients')
      .set({ next_our_number: value })
      .where('client_id', '=', clientId)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async setHolder(clientId: string, holder: AccountHolder): Promise<InterClientRow> {
    await this.client(clientId);
    return this.db
      .updateTable('inter_clients')
      .set({ holder: JSON.stringify(holder) })
      .where('client_id', '=', clientId)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async setWebhook(clientId: string, url: string | null): Promise<void> {
    const now = new Date();
    const current = await this.client(clientId);
    await this.db
      .updateTable('inter_clients')
      .set({
        webhook_url: url,
        webhook_created_at: url === null ? null : (current.webhook_created_at ?? now),
        webhook_updated_at: url === null ? null : now,
      })
      .where('client_id', '=', clientId)
      .execute();
  }

  // --- charges ------------------------------------------------------------------------------------

  /** Stores a new charge EM_PROCESSAMENTO; with no issue delay it is issued before this returns. */
  async create(clientId: string, request: CreateChargeRequest): Promise<InterChargeRow> {
    const failsIssue = this.behaviour.failIssueOnce;
    this.behaviour.failIssueOnce = false;
    const now = new Date();
    const today = brasiliaDate(now);
    const row = await this.db
      .insertInto('inter_charges')
      .values({
        codigo_solicitacao: randomUUID(),
        client_id: clientId,
        seu_numero: request.seuNumero,
        request: JSON.stringify(request),
        amount_cents: toCents(request.valorNominal),
        due_date: request.dataVencimento,
        issue_date: today,
        situacao: 'EM_PROCESSAMENTO',
        data_situacao: today,
        fails_issue: failsIssue,
        issue_at: new Date(now.getTime() + this.behaviour.issueDelayMs),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (this.behaviour.issueDelayMs > 0) return row;
    await this.issueDue(clientId, row.codigo_solicitacao);
    return (await this.find(clientId, row.codigo_solicitacao))!;
  }

  /** Issues the client's charges whose issue time has come (or just one of them). */
  async issueDue(clientId: string, codigoSolicitacao?: string): Promise<void> {
    let query = this.db
      .selectFrom('inter_charges')
      .select('codigo_solicitacao')
      .where('client_id', '=', clientId)
      .where('situacao', '=', 'EM_PROCESSAMENTO')
      .where('issue_at', '<=', new Date());
    if (codigoSolicitacao) query = query.where('codigo_solicitacao', '=', codigoSolicitacao);
    for (const { codigo_solicitacao } of await query.execute()) await this.issue(codigo_solicitacao);
  }

  /** One charge out of EM_PROCESSAMENTO: numbered from its client's sequence, or FALHA_EMISSAO when planned. */
  private async issue(codigoSolicitacao: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('inter_charges')
        .selectAll()
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .forUpdate()
        .executeTakeFirst();
      if (!row || row.situacao !== 'EM_PROCESSAMENTO') return;
      const today = brasiliaDate();
      if (row.fails_issue) {
        await trx
          .updateTable('inter_charges')
          .set({ situacao: 'FALHA_EMISSAO', data_situacao: today })
          .where('codigo_solicitacao', '=', codigoSolicitacao)
          .execute();
        return;
      }
      const client = await nextOurNumber(trx, row.client_id);
      const ourNumber = formatOurNumber(client.ourNumber);
      const holder = holderOf(this.bank, client.holder);
      const account = clientAccount(this.bank, client.account, holder);
      const amountCents = row.amount_cents;
      const barcode = buildBarcode({
        bankCode: account.bankCode,
        amountCents,
        dueDate: row.due_date,
        freeField: buildFreeField({
          agency: account.agency,
          wallet: account.wallet,
          ourNumber,
          account: account.account,
        }),
      });
      // A txid of the charge's own (its id without dashes, 25 characters): unique even where nossoNumeros repeat.
      const txid = codigoSolicitacao.replace(/-/g, '').slice(0, 25);
      await trx
        .updateTable('inter_charges')
        .set({
          situacao: 'A_RECEBER',
          data_situacao: today,
          nosso_numero: ourNumber,
          barcode,
          typeable_line: typeableLineFromBarcode(barcode),
          txid,
          pix_copy_and_paste: buildBrCode(account.pix, amountCents, txid),
        })
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .execute();
    });
  }

  /** A client's charge, issued first if its time has come; null when it is not this client's. */
  async find(clientId: string, codigoSolicitacao: string): Promise<InterChargeRow | null> {
    if (!isUuid(codigoSolicitacao)) return null;
    await this.issueDue(clientId, codigoSolicitacao);
    return (
      (await this.db
        .selectFrom('inter_charges')
        .selectAll()
        .where('client_id', '=', clientId)
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .executeTakeFirst()) ?? null
    );
  }

  /** The list endpoint: a client's charges whose chosen date falls in [dataInicial, dataFinal], oldest first. */
  async list(clientId: string, query: ListChargesQuery): Promise<InterChargeRow[]> {
    await this.issueDue(clientId);
    const byDate = query.filtrarDataPor ?? 'VENCIMENTO';
    let select = this.db.selectFrom('inter_charges').selectAll().where('client_id', '=', clientId);
    if (byDate === 'VENCIMENTO')
      select = select.where('due_date', '>=', query.dataInicial).where('due_date', '<=', query.dataFinal);
    else if (byDate === 'EMISSAO')
      select = select.where('issue_date', '>=', query.dataInicial).where('issue_date', '<=', query.dataFinal);
    else select = select.where('paid_at', 'is not', null);
    if (query.seuNumero) select = select.where('seu_numero', '=', query.seuNumero);
    let rows = await select.orderBy('created_at').limit(1_000).execute();
    if (byDate === 'PAGAMENTO')
      rows = rows.filter((r) => {
        const paid = brasiliaDate(r.paid_at!);
        return paid >= query.dataInicial && paid <= query.dataFinal;
      });
    if (query.situacao) {
      const wanted = new Set(query.situacao.split(','));
      rows = rows.filter((r) => wanted.has(effectiveSituation(r)));
    }
    return rows;
  }

  /** Cancels an open (or not yet issued) charge; cancelling a cancelled one again is fine. */
  async cancel(clientId: string, codigoSolicitacao: string, reason: string): Promise<CancelResult> {
    const row = await this.find(clientId, codigoSolicitacao);
    if (!row) return 'not_found';
    const situation = effectiveSituation(row);
    if (situation === 'CANCELADO') return 'cancelled';
    if (!['EM_PROCESSAMENTO', 'A_RECEBER', 'ATRASADO', 'PROTESTO'].includes(situation)) return 'not_open';
    const updated = await this.db
      .updateTable('inter_charges')
      .set({ situacao: 'CANCELADO', data_situacao: brasiliaDate(), cancel_reason: reason })
      .where('codigo_solicitacao', '=', codigoSolicitacao)
      .where('situacao', 'in', ['EM_PROCESSAMENTO', 'A_RECEBER', 'PROTESTO'])
      .executeTakeFirst();
    return updated.numUpdatedRows > 0n ? 'cancelled' : this.cancel(clientId, codigoSolicitacao, reason);
  }

  /**
   * Settles an open charge and, when its client registered a webhook, records the notification in the
   * same transaction (so a payment is never without it). amountPaidCents null = the nominal value.
   */
  async pay(codigoSolicitacao: string, method: PaymentMethod, amountPaidCents: number | null): Promise<PayResult> {
    const clientId = await this.db
      .selectFrom('inter_charges')
      .select('client_id')
      .where('codigo_solicitacao', '=', codigoSolicitacao)
      .executeTakeFirst();
    if (!clientId) return { outcome: 'not_found' };
    await this.issueDue(clientId.client_id, codigoSolicitacao);
    return this.db.transaction().execute(async (trx): Promise<PayResult> => {
      const row = await trx
        .selectFrom('inter_charges')
        .selectAll()
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .forUpdate()
        .executeTakeFirstOrThrow();
      if (!['A_RECEBER', 'ATRASADO', 'PROTESTO'].includes(effectiveSituation(row)))
        return { outcome: 'not_open', charge: row };
      const at = new Date();
      const paid = await trx
        .updateTable('inter_charges')
        .set({
          situacao: method === 'manual' ? 'MARCADO_RECEBIDO' : 'RECEBIDO',
          data_situacao: brasiliaDate(at),
          paid_at: at,
          amount_paid_cents: amountPaidCents ?? row.amount_cents,
          payment_origin: method === 'manual' ? null : method === 'pix' ? 'PIX' : 'BOLETO',
        })
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .returningAll()
        .executeTakeFirstOrThrow();
      const client = await trx
        .selectFrom('inter_clients')
        .select('webhook_url')
        .where('client_id', '=', row.client_id)
        .executeTakeFirstOrThrow();
      if (client.webhook_url) {
        await trx
          .insertInto('inter_notifications')
          .values({
            notification_id: randomUUID(),
            client_id: row.client_id,
            codigo_solicitacao: codigoSolicitacao,
            url: client.webhook_url,
            body: JSON.stringify([webhookItem(paid, at)]),
            status: 'pending',
            next_attempt_at: at,
          })
          .execute();
      }
      return { outcome: 'paid', charge: paid, notified: client.webhook_url !== null };
    });
  }

  /**
   * Which Inter charge the pay control's id names: a codigoSolicitacao, or a nossoNumero held by exactly
   * one Inter charge and no charge of the sandbox's own API (ourNumberCount: how many of those have it).
   */
  async payTarget(id: string, ourNumberCount: number): Promise<PayTarget> {
    if (isUuid(id)) {
      const row = await this.db
        .selectFrom('inter_charges')
        .select('codigo_solicitacao')
        .where('codigo_solicitacao', '=', id.toLowerCase())
        .executeTakeFirst();
      return row ? { kind: 'inter', codigoSolicitacao: row.codigo_solicitacao } : { kind: 'none' };
    }
    const candidates = await this.db
      .selectFrom('inter_charges')
      .select(['client_id', 'codigo_solicitacao'])
      .where('nosso_numero', '=', id)
      .execute();
    if (candidates.length === 0) return { kind: 'none' };
    if (candidates.length === 1 && ourNumberCount === 0)
      return { kind: 'inter', codigoSolicitacao: candidates[0].codigo_solicitacao };
    return { kind: 'ambiguous', candidates };
  }

  /** The slip PDF's beneficiary and the charge, for GET .../pdf. */
  async pdfParts(row: InterChargeRow) {
    const client = await this.client(row.client_id);
    return { payee: clientPayee(this.bank, client.account, holderOf(this.bank, client.holder)) };
  }
}

async function nextOurNumber(trx: Transaction<InterDatabase>, clientId: string) {
  const client = await trx
    .updateTable('inter_clients')
    .set({ next_our_number: sql`next_our_number + 1` })
    .where('client_id', '=', clientId)
    .returning(['next_our_number', 'account', 'holder'])
    .executeTakeFirstOrThrow();
  return { ourNumber: Number(client.next_our_number) - 1, account: client.account, holder: client.holder };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
