import { createHash, randomUUID, X509Certificate } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { toCents } from '@payments/br-format';
import type { CertificateAuthority } from '@payments/dev-certificates';
import { buildBarcode, typeableLineFromBarcode } from '../barcode';
import { buildBrCode } from '../br-code';
import { buildFreeField } from '../free-field';
import { formatOurNumber, OUR_NUMBER_DIGITS } from '../slip-issuer';
import { isUuid } from '../uuid';
import {
  SITUACOES_CALLBACK,
  type CallbackAttemptPage,
  type CallbacksQuery,
  type EmitirCobrancaRequestBody,
  type ListarCobrancasQuery,
  type OrdenarPor,
  type SituacaoCallback,
} from './contract';
import type { AccountHolder, InterChargeRow, InterClientRow, InterDatabase, InterDb } from '../../db/inter';
import { noFaults, type InterFaults } from './faults';
import { taxIdDigits } from './rules';
import { clientAccount, clientPayee, holderOf, type SandboxBank } from './terms';
import { brasiliaDate, callbackItem, effectiveSituation } from './wire';

export const TOKEN_TTL_SECONDS = 3_600;

/** "não será possível emitir mais de uma cobrança com todos estes campos idênticos em um intervalo de 30 minutos". */
export const DUPLICATE_WINDOW_MS = 30 * 60_000;

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

export type CancelResult =
  | { outcome: 'cancelled'; charge: InterChargeRow }
  | { outcome: 'not_open'; charge: InterChargeRow }
  | { outcome: 'not_found' };
export type PayResult =
  | { outcome: 'paid'; charge: InterChargeRow }
  | { outcome: 'not_open'; charge: InterChargeRow }
  | { outcome: 'not_found' };
export type ExpireResult =
  | { outcome: 'expired'; charge: InterChargeRow }
  | { outcome: 'not_open'; charge: InterChargeRow }
  | { outcome: 'not_found' };
export type CreateResult =
  { outcome: 'created'; charge: InterChargeRow } | { outcome: 'duplicate'; charge: InterChargeRow };

/** An integration as Inter's internet banking hands one out (POST /sandbox/inter/integrations). */
export interface Integration {
  client_id: string;
  client_secret: string;
  cert_pem: string;
  key_pem: string;
  account: string;
  pix_key: string;
}

const OPEN_SITUATIONS = ['A_RECEBER', 'ATRASADO', 'PROTESTO'];
const CANCELLABLE_STORED = ['EM_PROCESSAMENTO', 'A_RECEBER', 'PROTESTO'] as const;

/**
 * The Inter dialect's ledger: integrations (each a checking account of its own), their tokens, charges
 * and notices. Charges are created EM_PROCESSAMENTO and issued (nossoNumero from the sandbox-wide
 * sequence, barcode, BR Code when the account has a PIX key) when their issue time comes, so creation
 * is asynchronous as at Inter. Every change a notice is due for (issued, failed to issue, paid,
 * cancelled, expired) records the notice in the same transaction, unless the drop_webhooks fault is on.
 */
export class InterBank {
  readonly behaviour: InterBehaviour;
  readonly faults: InterFaults = noFaults();
  /** Called after a notice is recorded (the sender looks at its queue then). */
  onNotice: () => void = () => undefined;

  constructor(
    private readonly db: InterDb,
    private readonly bank: SandboxBank,
    issueDelayMs: number,
  ) {
    this.behaviour = { slowOnceMs: 0, failIssueOnce: false, issueDelayMs };
  }

  // --- integrations, clients and tokens -----------------------------------------------------------

  /** A new integration: its own account, a PIX key registered to it, a fixed secret, a certificate signed by `ca`. */
  async createIntegration(ca: CertificateAuthority): Promise<Integration> {
    const clientId = randomUUID();
    const secret = randomUUID();
    const identity = ca.issue({ commonName: clientId, kind: 'client', validDays: 365 });
    const pixKey = randomUUID(); // a random (EVP) key, as the DICT issues them
    const holder: AccountHolder = {
      name: this.bank.payee.name,
      tax_id: this.bank.payee.taxId,
      city: this.bank.account.pix.merchantCity,
      pix_key: pixKey,
    };
    const row = await this.db
      .insertInto('inter_clients')
      .values({
        client_id: clientId,
        secret_sha256: sha256(secret),
        integration: true,
        cert_fingerprint: new X509Certificate(identity.certPem).fingerprint256,
        account: sql<string>`(1000000 + nextval('inter_account_seq'))::text`,
        holder: JSON.stringify(holder),
      })
      .returning('account')
      .executeTakeFirstOrThrow();
    return {
      client_id: clientId,
      client_secret: secret,
      cert_pem: identity.certPem,
      key_pem: identity.keyPem,
      account: row.account,
      pix_key: pixKey,
    };
  }

  /** The client's row, created on first sight (a client_id the sandbox never issued) with an account of its own. */
  async client(clientId: string): Promise<InterClientRow> {
    await sql`insert into inter_clients (client_id, account)
              values (${clientId}, (1000000 + nextval('inter_account_seq'))::text)
              on conflict (client_id) do nothing`.execute(this.db);
    return this.db.selectFrom('inter_clients').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();
  }

  /** Client credentials: an integration's fixed secret; else the first secret presented for a client_id. */
  async checkSecret(clientId: string, secret: string): Promise<InterClientRow | null> {
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
      return after.secret_sha256 === digest ? after : null;
    }
    return client.secret_sha256 === digest ? client : null;
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
  async authenticate(
    token: string,
    certFingerprint: string,
  ): Promise<{ clientId: string; scopes: string[]; account: string } | null> {
    const row = await this.db
      .selectFrom('inter_tokens')
      .innerJoin('inter_clients', 'inter_clients.client_id', 'inter_tokens.client_id')
      .select([
        'inter_tokens.client_id',
        'inter_tokens.scopes',
        'inter_tokens.cert_fingerprint',
        'inter_clients.account',
      ])
      .where('inter_tokens.token', '=', token)
      .where('inter_tokens.expires_at', '>', new Date())
      .executeTakeFirst();
    if (!row || row.cert_fingerprint !== certFingerprint) return null;
    return { clientId: row.client_id, scopes: row.scopes.split(' '), account: row.account };
  }

  /** The next nossoNumero of the whole sandbox (one sequence for every dialect, docs/architecture.md). */
  async setNextOurNumber(value: number): Promise<void> {
    await sql`select setval('our_number_seq', ${value}, false)`.execute(this.db);
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

  /**
   * Stores a new charge EM_PROCESSAMENTO (with no issue delay, issued before this returns); or, when
   * the same seuNumero, valorNominal, dataVencimento and payer cpfCnpj were created within 30 minutes,
   * the charge that has them (Inter's duplicate control).
   */
  async create(clientId: string, request: EmitirCobrancaRequestBody): Promise<CreateResult> {
    const now = new Date();
    const payerTaxId = taxIdDigits(request.pagador.cpfCnpj);
    const amountCents = toCents(request.valorNominal);
    const result = await this.db.transaction().execute(async (trx): Promise<CreateResult> => {
      // One create at a time per duplicate key, so two at once cannot both pass the check.
      const key = [clientId, request.seuNumero, amountCents, request.dataVencimento, payerTaxId].join('|');
      await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
      const duplicate = await trx
        .selectFrom('inter_charges')
        .selectAll()
        .where('client_id', '=', clientId)
        .where('seu_numero', '=', request.seuNumero)
        .where('amount_cents', '=', amountCents)
        .where('due_date', '=', request.dataVencimento)
        .where('payer_tax_id', '=', payerTaxId)
        .where('created_at', '>', new Date(now.getTime() - DUPLICATE_WINDOW_MS))
        .executeTakeFirst();
      if (duplicate) return { outcome: 'duplicate', charge: duplicate };
      const failsIssue = this.behaviour.failIssueOnce;
      this.behaviour.failIssueOnce = false;
      const today = brasiliaDate(now);
      const charge = await trx
        .insertInto('inter_charges')
        .values({
          codigo_solicitacao: randomUUID(),
          client_id: clientId,
          seu_numero: request.seuNumero,
          request: JSON.stringify(request),
          payer_tax_id: payerTaxId,
          amount_cents: amountCents,
          due_date: request.dataVencimento,
          issue_date: today,
          situacao: 'EM_PROCESSAMENTO',
          data_situacao: today,
          fails_issue: failsIssue,
          issue_at: new Date(now.getTime() + this.behaviour.issueDelayMs),
          created_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { outcome: 'created', charge };
    });
    if (result.outcome === 'duplicate' || this.behaviour.issueDelayMs > 0) return result;
    await this.issueDue(clientId, result.charge.codigo_solicitacao);
    return { outcome: 'created', charge: await this.row(result.charge.codigo_solicitacao) };
  }

  /** Issues the charges whose issue time has come: of one client, or one charge, or all. */
  async issueDue(clientId?: string, codigoSolicitacao?: string): Promise<void> {
    let query = this.db
      .selectFrom('inter_charges')
      .select('codigo_solicitacao')
      .where('situacao', '=', 'EM_PROCESSAMENTO')
      .where('issue_at', '<=', new Date());
    if (clientId) query = query.where('client_id', '=', clientId);
    if (codigoSolicitacao) query = query.where('codigo_solicitacao', '=', codigoSolicitacao);
    for (const { codigo_solicitacao } of await query.limit(1_000).execute()) await this.issue(codigo_solicitacao);
  }

  /**
   * One charge out of EM_PROCESSAMENTO: numbered from the sandbox-wide sequence, with a PIX QR code only
   * when its account has a PIX key (and no fault says otherwise); or FALHA_EMISSAO when planned.
   */
  private async issue(codigoSolicitacao: string): Promise<void> {
    const noticed = await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('inter_charges')
        .selectAll()
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .forUpdate()
        .executeTakeFirst();
      if (!row || row.situacao !== 'EM_PROCESSAMENTO') return false;
      const now = new Date();
      const today = brasiliaDate(now);
      if (row.fails_issue) {
        const failed = await trx
          .updateTable('inter_charges')
          .set({ situacao: 'FALHA_EMISSAO', data_situacao: today })
          .where('codigo_solicitacao', '=', codigoSolicitacao)
          .returningAll()
          .executeTakeFirstOrThrow();
        return this.notice(trx, failed, 'FALHA_EMISSAO', now);
      }
      const client = await trx
        .selectFrom('inter_clients')
        .select(['account', 'holder'])
        .where('client_id', '=', row.client_id)
        .executeTakeFirstOrThrow();
      const { value } = (await sql<{ value: number }>`select nextval('our_number_seq') as value`.execute(trx)).rows[0];
      const ourNumber = formatOurNumber(Number(value));
      const holder = holderOf(this.bank, client.holder);
      const account = clientAccount(this.bank, client.account, holder);
      const barcode = buildBarcode({
        bankCode: account.bankCode,
        amountCents: row.amount_cents,
        dueDate: row.due_date,
        freeField: buildFreeField({
          agency: account.agency,
          wallet: account.wallet,
          ourNumber,
          account: account.account,
        }),
      });
      const ways = row.request.formasRecebimento ?? ['BOLETO', 'PIX'];
      const withPix = holder.pix_key !== null && !this.faults.no_pix_key && ways.includes('PIX');
      // A txid of the charge's own: its codigoSolicitacao without dashes (32 characters, Inter's 26 to 35).
      // The sandbox's static BR Code carries at most 25 of them (field 62-05); a dynamic one would carry a URL.
      const txid = codigoSolicitacao.replace(/-/g, '');
      const issued = await trx
        .updateTable('inter_charges')
        .set({
          situacao: 'A_RECEBER',
          data_situacao: today,
          nosso_numero: ourNumber,
          barcode,
          typeable_line: typeableLineFromBarcode(barcode),
          txid: withPix ? txid : null,
          pix_copy_and_paste: withPix ? buildBrCode(account.pix, row.amount_cents, txid.slice(0, 25)) : null,
        })
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.notice(trx, issued, 'A_RECEBER', now);
    });
    if (noticed) this.onNotice();
  }

  private async row(codigoSolicitacao: string): Promise<InterChargeRow> {
    return this.db
      .selectFrom('inter_charges')
      .selectAll()
      .where('codigo_solicitacao', '=', codigoSolicitacao)
      .executeTakeFirstOrThrow();
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
        .where('codigo_solicitacao', '=', codigoSolicitacao.toLowerCase())
        .executeTakeFirst()) ?? null
    );
  }

  /** GET /cobrancas: the client's charges by the chosen date and filters, ordered and paged as asked. */
  async list(clientId: string, query: ListarCobrancasQuery): Promise<{ rows: InterChargeRow[]; total: number }> {
    await this.issueDue(clientId);
    const { dataInicial: from, dataFinal: to } = query;
    let select = this.db.selectFrom('inter_charges').selectAll().where('client_id', '=', clientId);
    const byDate = query.filtrarDataPor ?? 'VENCIMENTO';
    if (byDate === 'VENCIMENTO') select = select.where('due_date', '>=', from).where('due_date', '<=', to);
    else if (byDate === 'EMISSAO') select = select.where('issue_date', '>=', from).where('issue_date', '<=', to);
    else
      select = select
        .where('paid_at', 'is not', null)
        .where(sql<string>`((paid_at at time zone 'America/Sao_Paulo')::date)::text`, '>=', from)
        .where(sql<string>`((paid_at at time zone 'America/Sao_Paulo')::date)::text`, '<=', to);
    if (query.seuNumero) select = select.where('seu_numero', '=', query.seuNumero);
    if (query.cpfCnpjPessoaPagadora)
      select = select.where('payer_tax_id', '=', taxIdDigits(query.cpfCnpjPessoaPagadora));
    if (query.pessoaPagadora)
      select = select.where(sql<string>`request->'pagador'->>'nome'`, 'ilike', `%${query.pessoaPagadora}%`);
    if (query.tipoCobranca && query.tipoCobranca !== 'SIMPLES') return { rows: [], total: 0 };
    const today = brasiliaDate();
    let rows = await select.execute();
    if (query.situacao) rows = rows.filter((r) => effectiveSituation(r, today) === query.situacao);
    rows.sort(ordering(query.ordenarPor ?? 'PESSOA_PAGADORA', query.tipoOrdenacao === 'DESC', today));
    const size = query['paginacao.itensPorPagina'] ?? 100;
    const page = query['paginacao.paginaAtual'] ?? 0;
    return { rows: rows.slice(page * size, page * size + size), total: rows.length };
  }

  /** Cancels an open (or not yet issued) charge, with its CANCELADO notice; a cancelled one again is fine. */
  async cancel(clientId: string | null, codigoSolicitacao: string, reason: string): Promise<CancelResult> {
    const owner = clientId ?? (await this.ownerOf(codigoSolicitacao));
    const row = owner ? await this.find(owner, codigoSolicitacao) : null;
    if (!row) return { outcome: 'not_found' };
    const noticed = await this.db.transaction().execute(async (trx) => {
      const locked = await trx
        .selectFrom('inter_charges')
        .selectAll()
        .where('codigo_solicitacao', '=', row.codigo_solicitacao)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const situation = effectiveSituation(locked);
      if (situation === 'CANCELADO') return 'already' as const;
      if (!(CANCELLABLE_STORED as readonly string[]).includes(locked.situacao) || situation === 'EXPIRADO')
        return 'not_open' as const;
      const at = new Date();
      const cancelled = await trx
        .updateTable('inter_charges')
        .set({ situacao: 'CANCELADO', data_situacao: brasiliaDate(at), cancel_reason: reason })
        .where('codigo_solicitacao', '=', row.codigo_solicitacao)
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.notice(trx, cancelled, 'CANCELADO', at);
    });
    if (noticed === 'not_open') return { outcome: 'not_open', charge: await this.row(row.codigo_solicitacao) };
    if (noticed === true) this.onNotice();
    return { outcome: 'cancelled', charge: await this.row(row.codigo_solicitacao) };
  }

  /** Settles an open charge with what was paid (null: the nominal value), with its notice. */
  async pay(codigoSolicitacao: string, method: PaymentMethod, amountPaidCents: number | null): Promise<PayResult> {
    const owner = await this.ownerOf(codigoSolicitacao);
    if (!owner) return { outcome: 'not_found' };
    await this.issueDue(owner, codigoSolicitacao);
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('inter_charges')
        .selectAll()
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .forUpdate()
        .executeTakeFirstOrThrow();
      if (!OPEN_SITUATIONS.includes(effectiveSituation(row))) return { outcome: 'not_open' as const, charge: row };
      const at = new Date();
      const situacao = method === 'manual' ? 'MARCADO_RECEBIDO' : 'RECEBIDO';
      const paid = await trx
        .updateTable('inter_charges')
        .set({
          situacao,
          data_situacao: brasiliaDate(at),
          paid_at: at,
          amount_paid_cents: amountPaidCents ?? row.amount_cents,
          payment_origin: method === 'manual' ? null : method === 'pix' ? 'PIX' : 'BOLETO',
        })
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .returningAll()
        .executeTakeFirstOrThrow();
      const noticed = await this.notice(trx, paid, situacao, at);
      return { outcome: 'paid' as const, charge: paid, noticed };
    });
    if (result.outcome === 'paid' && result.noticed) this.onNotice();
    return result.outcome === 'paid' ? { outcome: 'paid', charge: result.charge } : result;
  }

  /** Lets an open charge expire now (Inter cancels it numDiasAgenda days after its due date), with its notice. */
  async expire(codigoSolicitacao: string): Promise<ExpireResult> {
    const owner = await this.ownerOf(codigoSolicitacao);
    if (!owner) return { outcome: 'not_found' };
    await this.issueDue(owner, codigoSolicitacao);
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('inter_charges')
        .selectAll()
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .forUpdate()
        .executeTakeFirstOrThrow();
      if (row.situacao !== 'A_RECEBER' && row.situacao !== 'PROTESTO')
        return { outcome: 'not_open' as const, charge: row };
      const at = new Date();
      const expired = await trx
        .updateTable('inter_charges')
        .set({ situacao: 'EXPIRADO', data_situacao: brasiliaDate(at) })
        .where('codigo_solicitacao', '=', codigoSolicitacao)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { outcome: 'expired' as const, charge: expired, noticed: await this.notice(trx, expired, 'EXPIRADO', at) };
    });
    if (result.outcome === 'expired' && result.noticed) this.onNotice();
    return result.outcome === 'expired' ? { outcome: 'expired', charge: result.charge } : result;
  }

  /** The bank's clock: issues what is due, and records EXPIRADO (with its notice) past numDiasAgenda. */
  async tick(): Promise<void> {
    await this.issueDue();
    const today = brasiliaDate();
    const due = await this.db
      .selectFrom('inter_charges')
      .select('codigo_solicitacao')
      .where('situacao', '=', 'A_RECEBER')
      .where(sql<boolean>`(due_date::date + (request->>'numDiasAgenda')::int) < ${today}::date`)
      .limit(500)
      .execute();
    for (const { codigo_solicitacao } of due) await this.expire(codigo_solicitacao);
  }

  /**
   * Which Inter charge the pay control's id names: a codigoSolicitacao, a nossoNumero (unique across
   * the sandbox: one sequence for every dialect) or a txid; null when none.
   */
  async payTarget(id: string): Promise<string | null> {
    let query = this.db.selectFrom('inter_charges').select('codigo_solicitacao');
    if (isUuid(id)) query = query.where('codigo_solicitacao', '=', id.toLowerCase());
    else if (/^\d{1,11}$/.test(id)) query = query.where('nosso_numero', '=', id.padStart(OUR_NUMBER_DIGITS, '0'));
    else if (/^[a-zA-Z0-9]{26,35}$/.test(id)) query = query.where('txid', '=', id);
    else return null;
    return (await query.executeTakeFirst())?.codigo_solicitacao ?? null;
  }

  private async ownerOf(codigoSolicitacao: string): Promise<string | null> {
    if (!isUuid(codigoSolicitacao)) return null;
    const row = await this.db
      .selectFrom('inter_charges')
      .select('client_id')
      .where('codigo_solicitacao', '=', codigoSolicitacao.toLowerCase())
      .executeTakeFirst();
    return row?.client_id ?? null;
  }

  /** The slip PDF's beneficiary, for GET .../pdf. */
  async pdfParts(row: InterChargeRow) {
    const client = await this.client(row.client_id);
    return { payee: clientPayee(this.bank, client.account, holderOf(this.bank, client.holder)) };
  }

  // --- notices and their history -------------------------------------------------------------------

  /** Records a notice of `row` now being `situacao` to its client's webhook (none when none is set, or dropped). */
  private async notice(
    trx: Transaction<InterDatabase>,
    row: InterChargeRow,
    situacao: SituacaoCallback,
    at: Date,
  ): Promise<boolean> {
    if (this.faults.drop_webhooks) return false;
    const client = await trx
      .selectFrom('inter_clients')
      .select('webhook_url')
      .where('client_id', '=', row.client_id)
      .executeTakeFirstOrThrow();
    if (!client.webhook_url) return false;
    await trx
      .insertInto('inter_notifications')
      .values({
        notification_id: randomUUID(),
        client_id: row.client_id,
        codigo_solicitacao: row.codigo_solicitacao,
        url: client.webhook_url,
        body: JSON.stringify([callbackItem(row, situacao, at)]),
        status: 'pending',
        next_attempt_at: at,
      })
      .execute();
    return true;
  }

  /** GET /cobrancas/webhook/callbacks: the client's delivery attempts in [dataHoraInicio, dataHoraFim], newest first. */
  async callbacks(clientId: string, query: CallbacksQuery): Promise<CallbackAttemptPage> {
    let select = this.db
      .selectFrom('inter_notice_attempts')
      .where('client_id', '=', clientId)
      .where('fired_at', '>=', new Date(query.dataHoraInicio))
      .where('fired_at', '<=', new Date(query.dataHoraFim));
    if (query.codigoSolicitacao)
      select = select.where('codigo_solicitacao', '=', query.codigoSolicitacao.toLowerCase());
    const size = query.tamanhoPagina ?? 20;
    const page = query.pagina ?? 0;
    const [{ count }] = await select.select((eb) => eb.fn.countAll<string>().as('count')).execute();
    const rows = await select
      .selectAll()
      .orderBy('fired_at', 'desc')
      .orderBy('attempt_id')
      .offset(page * size)
      .limit(size)
      .execute();
    const total = Number(count);
    const pages = Math.ceil(total / size);
    return {
      totalElementos: total,
      totalPaginas: pages,
      primeiraPagina: page === 0,
      ultimaPagina: page >= pages - 1,
      data: rows.map((r) => ({
        webhookUrl: r.webhook_url,
        payload: JSON.parse(r.payload) as CallbackAttemptPage['data'][number]['payload'],
        numeroTentativa: r.attempt_number,
        dataHoraDisparo: r.fired_at.toISOString(),
        sucesso: r.success,
        ...(r.http_status !== null ? { httpStatus: r.http_status } : {}),
        ...(r.error_message !== null ? { mensagemErro: r.error_message } : {}),
      })),
    };
  }

  /**
   * POST /cobrancas/webhook/callbacks/retry: sends again the notice of each of the client's charges
   * named (its situation now); foundIds are those found, past EM_PROCESSAMENTO.
   */
  async retryCallbacks(clientId: string, codigos: string[]): Promise<string[]> {
    const found: string[] = [];
    let noticed = false;
    for (const codigo of new Set(codigos.map((c) => c.toLowerCase()))) {
      const row = await this.find(clientId, codigo);
      if (!row) continue;
      const situacao = callbackSituation(row);
      if (!situacao) continue;
      found.push(row.codigo_solicitacao);
      const at = situacao === 'RECEBIDO' || situacao === 'MARCADO_RECEBIDO' ? (row.paid_at ?? new Date()) : new Date();
      noticed = (await this.db.transaction().execute((trx) => this.notice(trx, row, situacao, at))) || noticed;
    }
    if (noticed) this.onNotice();
    return found;
  }
}

/** The situation a charge's notice carries now (SituacaoCobrancaCallbackEnum); null before it is issued. */
function callbackSituation(row: InterChargeRow): SituacaoCallback | null {
  const situation = effectiveSituation(row);
  if ((SITUACOES_CALLBACK as readonly string[]).includes(situation)) return situation as SituacaoCallback;
  return situation === 'ATRASADO' || situation === 'PROTESTO' ? 'A_RECEBER' : null;
}

/** ordenarPor / tipoOrdenacao of the list, ties broken by creation. */
function ordering(by: OrdenarPor, descending: boolean, today: string) {
  const key = (r: InterChargeRow): string | number => {
    switch (by) {
      case 'PESSOA_PAGADORA':
        return r.request.pagador.nome.toLowerCase();
      case 'TIPO_COBRANCA':
        return 'SIMPLES';
      case 'CODIGO_COBRANCA':
        return r.codigo_solicitacao;
      case 'IDENTIFICADOR':
        return r.seu_numero;
      case 'DATA_EMISSAO':
        return r.issue_date;
      case 'DATA_VENCIMENTO':
        return r.due_date;
      case 'VALOR':
        return r.amount_cents;
      case 'STATUS':
        return effectiveSituation(r, today);
    }
  };
  return (a: InterChargeRow, b: InterChargeRow): number => {
    const [ka, kb] = [key(a), key(b)];
    const order = ka < kb ? -1 : ka > kb ? 1 : a.created_at.getTime() - b.created_at.getTime();
    return descending ? -order : order;
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
