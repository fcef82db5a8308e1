import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for Inter's Cobrança API, written from Inter's reference (developers.inter.co/references/
 * cobranca-bolepix) for the faults the bank sandbox cannot produce on demand: a create stored and then
 * refused, a 403, a 429 with Retry-After, a token revoked under concurrent calls. Plain HTTP (the
 * adapter's TLS is tested against the sandbox); it keeps its charges, webhook and every call made,
 * and checks nothing with the adapter's own schemas.
 */
export interface ScriptedCharge {
  codigoSolicitacao: string;
  seuNumero: string;
  valorNominal: number;
  dataVencimento: string;
  cpfCnpj: string;
  createdAt: number;
  situacao: string;
}

export interface RecordedCall {
  method: string;
  path: string;
  at: number;
  status: number;
  headers: IncomingMessage['headers'];
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

export class ScriptedInterBank {
  url = '';
  readonly charges: ScriptedCharge[] = [];
  readonly calls: RecordedCall[] = [];
  webhookUrl: string | null = null;
  tokenRequests = 0;
  /** How long a token request takes (to make concurrent callers overlap). */
  tokenDelayMs = 0;
  /** A new charge's consult answers 404 for this long (Inter issues asynchronously). */
  consultNotFoundMs = 0;
  /** The situation a new charge is in when first consulted (FALHA_EMISSAO: Inter could not issue it). */
  newSituation = 'A_RECEBER';
  /** Charges are issued without PIX (the account has no PIX key). */
  noPix = false;
  /** Inter's duplicate control: a second create with the same key within this window is refused. */
  duplicateWindowMs = 30 * 60_000;
  /** Answers the next creates get instead of 200; 'store-then-400' stores the charge and answers 400. */
  createScript: Array<number | 'store-then-400'> = [];
  /** Statuses the next calls of an endpoint ('create', 'consult', 'list', ...) get instead of their answer. */
  readonly script = new Map<string, Array<{ status: number; headers?: Record<string, string> }>>();
  private readonly validTokens = new Set<string>();
  private server!: Server;

  static async start(): Promise<ScriptedInterBank> {
    const bank = new ScriptedInterBank();
    bank.server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        void bank.handle(req, text).then((answer) => {
          const url = new URL(req.url ?? '/', 'http://x');
          bank.calls.push({
            method: req.method ?? '',
            path: url.pathname,
            at: Date.now(),
            status: answer.status,
            headers: req.headers,
          });
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
        });
      });
    });
    await new Promise<void>((resolve) => bank.server.listen(0, '127.0.0.1', resolve));
    bank.url = `http://127.0.0.1:${(bank.server.address() as AddressInfo).port}`;
    return bank;
  }

  /** Every token issued so far stops working (the next call with one gets 401). */
  revokeTokens(): void {
    this.validTokens.clear();
  }

  /** The calls made to an endpoint (by method and path shape). */
  callsTo(endpoint: string): RecordedCall[] {
    return this.calls.filter((c) => endpointOf(c.method, c.path) === endpoint);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, text: string): Promise<Answer> {
    const method = req.method ?? '';
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    if (path === '/oauth/v2/token' && method === 'POST') {
      this.tokenRequests += 1;
      if (this.tokenDelayMs > 0) await new Promise((r) => setTimeout(r, this.tokenDelayMs));
      const token = `token-${this.tokenRequests}-${randomUUID()}`;
      this.validTokens.add(token);
      return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: 3600, scope: 'x' } };
    }
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !this.validTokens.has(bearer)) return problem(401, 'Unauthorized');
    const endpoint = endpointOf(method, path);
    const scripted = this.script.get(endpoint)?.shift();
    if (scripted) return { ...problem(scripted.status, 'Scripted'), headers: scripted.headers };
    switch (endpoint) {
      case 'webhook':
        if (method === 'GET')
          return this.webhookUrl
            ? { status: 200, body: { webhookUrl: this.webhookUrl, criacao: new Date().toISOString() } }
            : problem(404, 'Não Encontrado');
        if (method === 'PUT') {
          this.webhookUrl = (JSON.parse(text) as { webhookUrl: string }).webhookUrl;
          return { status: 204 };
        }
        return problem(405, 'Method Not Allowed');
      case 'create':
        return this.create(JSON.parse(text) as Record<string, unknown>);
      case 'list':
        return this.list(url.searchParams);
      case 'consult':
        return this.consult(decodeURIComponent(path.split('/').pop() ?? ''));
      default:
        return problem(404, 'Não Encontrado');
    }
  }

  private create(body: Record<string, unknown>): Answer {
    const next = this.createScript.shift();
    if (typeof next === 'number') return problem(next, 'Scripted');
    const payer = body.pagador as { cpfCnpj: string };
    const key = {
      seuNumero: String(body.seuNumero),
      valorNominal: Number(body.valorNominal),
      dataVencimento: String(body.dataVencimento),
      cpfCnpj: payer.cpfCnpj,
    };
    const duplicate = this.charges.find(
      (c) =>
        c.seuNumero === key.seuNumero &&
        c.valorNominal === key.valorNominal &&
        c.dataVencimento === key.dataVencimento &&
        c.cpfCnpj === key.cpfCnpj &&
        Date.now() - c.createdAt < this.duplicateWindowMs,
    );
    if (duplicate) return problem(400, 'Cobrança duplicada');
    const charge: ScriptedCharge = {
      ...key,
      codigoSolicitacao: randomUUID(),
      createdAt: Date.now(),
      situacao: this.newSituation,
    };
    this.charges.push(charge);
    if (next === 'store-then-400') return problem(400, 'Dados inválidos.');
    return { status: 200, body: { codigoSolicitacao: charge.codigoSolicitacao } };
  }

  private list(query: URLSearchParams): Answer {
    const from = query.get('dataInicial') ?? '';
    const to = query.get('dataFinal') ?? '';
    if (!from || !to) return problem(400, 'Dados inválidos.');
    const seuNumero = query.get('seuNumero');
    const found = this.charges.filter(
      (c) => c.dataVencimento >= from && c.dataVencimento <= to && (!seuNumero || c.seuNumero === seuNumero),
    );
    return {
      status: 200,
      body: {
        totalPaginas: 1,
        totalElementos: found.length,
        cobrancas: found.map((c) => this.view(c, true)),
      },
    };
  }

  private consult(codigo: string): Answer {
    const charge = this.charges.find((c) => c.codigoSolicitacao === codigo);
    if (!charge || Date.now() - charge.createdAt < this.consultNotFoundMs) return problem(404, 'Não Encontrado');
    return { status: 200, body: this.view(charge, false) };
  }

  /** A charge as the reference shows it: valorNominal a string in lists, a number in a consult. */
  private view(c: ScriptedCharge, listed: boolean) {
    const digits = c.codigoSolicitacao.replace(/\D/g, '').padEnd(47, '7');
    return {
      cobranca: {
        codigoSolicitacao: c.codigoSolicitacao,
        seuNumero: c.seuNumero,
        dataEmissao: new Date(c.createdAt).toISOString().slice(0, 10),
        dataVencimento: c.dataVencimento,
        valorNominal: listed ? c.valorNominal.toFixed(2) : c.valorNominal,
        tipoCobranca: 'SIMPLES',
        situacao: c.situacao,
      },
      boleto: {
        nossoNumero: digits.slice(0, 11),
        codigoBarras: digits.slice(0, 44),
        linhaDigitavel: digits.slice(0, 47),
      },
      ...(this.noPix
        ? {}
        : { pix: { txid: `tx${digits.slice(0, 30)}`, pixCopiaECola: `00020101021226${digits.slice(0, 20)}` } }),
    };
  }
}

function problem(status: number, title: string): Answer {
  return { status, body: { title, status, detail: title } };
}

function endpointOf(method: string, path: string): string {
  if (path === '/oauth/v2/token') return 'token';
  if (path.endsWith('/webhook/callbacks')) return 'callbacks';
  if (path.endsWith('/webhook')) return 'webhook';
  if (path === '/cobranca/v3/cobrancas') return method === 'POST' ? 'create' : 'list';
  if (path.endsWith('/cancelar')) return 'cancel';
  if (path.endsWith('/pdf')) return 'pdf';
  return 'consult';
}
