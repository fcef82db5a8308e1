import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { INTER_CALLBACK_SITUATIONS, INTER_SITUATIONS } from './situations';

/**
 * Banco Inter Cobrança v3 ("boleto com PIX") as it travels on the wire. Field names are Inter's
 * (Portuguese): the wire fixes them. Source for every path, field and value: Inter's API reference
 * (developers.inter.co/references/cobranca-bolepix); docs/providers/inter.md explains them.
 *
 * Requests are closed (additionalProperties: false): what our adapter sends must be exactly what Inter
 * documents. Responses are open: Inter may add fields, and we read only those named here.
 */

const closed = { additionalProperties: false } as const;

/** A string that is one of `values` (one `enum` keyword: one violation when it is not, not one per value). */
function oneOf<const T extends readonly string[]>(values: T): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });
}

/** Calendar date as Inter writes it: YYYY-MM-DD. */
export const InterDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

/** Money in reais (a JSON number, at most 2 decimals). */
export const Reais = Type.Number({ exclusiveMinimum: 0, maximum: 99_999_999.99, multipleOf: 0.01 });

/** Inter returns some amounts as decimal strings ("123.45") and others as numbers: both are accepted. */
export const ReaisOnWire = Type.Union([Type.Number({ minimum: 0 }), Type.String({ pattern: '^\\d+(\\.\\d{1,2})?$' })]);

export const InterSituation = oneOf(INTER_SITUATIONS);

// ---------------------------------------------------------------------------------------------------
// POST /oauth/v2/token (application/x-www-form-urlencoded), over mutual TLS.

export const TokenRequest = Type.Object(
  {
    client_id: Type.String({ minLength: 1 }),
    client_secret: Type.String({ minLength: 1 }),
    grant_type: Type.Literal('client_credentials'),
    /** Space-separated scopes, e.g. "boleto-cobranca.read boleto-cobranca.write". */
    scope: Type.String({ minLength: 1 }),
  },
  closed,
);
export type TokenRequest = Static<typeof TokenRequest>;

export const TokenResponse = Type.Object({
  access_token: Type.String({ minLength: 1 }),
  token_type: Type.String({ minLength: 1 }),
  expires_in: Type.Integer({ minimum: 1 }),
  scope: Type.String(),
});
export type TokenResponse = Static<typeof TokenResponse>;

// ---------------------------------------------------------------------------------------------------
// POST /cobranca/v3/cobrancas

export const Payer = Type.Object(
  {
    /** CPF (11 digits) or CNPJ (14 digits), digits only. */
    cpfCnpj: Type.String({ pattern: '^(\\d{11}|\\d{14})$' }),
    tipoPessoa: oneOf(['FISICA', 'JURIDICA'] as const),
    nome: Type.String({ minLength: 1, maxLength: 100 }),
    endereco: Type.String({ minLength: 1, maxLength: 100 }),
    numero: Type.Optional(Type.String({ maxLength: 10 })),
    complemento: Type.Optional(Type.String({ maxLength: 30 })),
    bairro: Type.Optional(Type.String({ maxLength: 60 })),
    cidade: Type.String({ minLength: 1, maxLength: 60 }),
    uf: Type.String({ pattern: '^[A-Z]{2}$' }),
    /** 8 digits. */
    cep: Type.String({ pattern: '^\\d{8}$' }),
    email: Type.Optional(Type.String({ maxLength: 50 })),
    ddd: Type.Optional(Type.String({ pattern: '^\\d{2}$' })),
    telefone: Type.Optional(Type.String({ pattern: '^\\d{8,9}$' })),
  },
  closed,
);
export type Payer = Static<typeof Payer>;

/** Discount: a fixed value (or a percentage) up to `quantidadeDias` days before the due date. */
export const Discount = Type.Object(
  {
    codigo: oneOf(['VALORFIXODATAINFORMADA', 'PERCENTUALDATAINFORMADA'] as const),
    quantidadeDias: Type.Integer({ minimum: 0 }),
    taxa: Type.Optional(Type.Number({ minimum: 0 })),
    valor: Type.Optional(Type.Number({ minimum: 0 })),
  },
  closed,
);
export type Discount = Static<typeof Discount>;

/** Late fine: a percentage (taxa) or a fixed value (valor). */
export const Fine = Type.Object(
  {
    codigo: oneOf(['PERCENTUAL', 'VALORFIXO'] as const),
    taxa: Type.Optional(Type.Number({ minimum: 0 })),
    valor: Type.Optional(Type.Number({ minimum: 0 })),
  },
  closed,
);
export type Fine = Static<typeof Fine>;

/** Late interest: a value per day (valor) or a monthly rate (taxa). */
export const Interest = Type.Object(
  {
    codigo: oneOf(['VALORDIA', 'TAXAMENSAL'] as const),
    taxa: Type.Optional(Type.Number({ minimum: 0 })),
    valor: Type.Optional(Type.Number({ minimum: 0 })),
  },
  closed,
);
export type Interest = Static<typeof Interest>;

const MessageLine = Type.Optional(Type.String({ maxLength: 78 }));
/** Up to five lines printed on the slip. */
export const Message = Type.Object(
  { linha1: MessageLine, linha2: MessageLine, linha3: MessageLine, linha4: MessageLine, linha5: MessageLine },
  closed,
);
export type Message = Static<typeof Message>;

export const CreateChargeRequest = Type.Object(
  {
    /** The issuer's own reference: 1 to 15 characters. */
    seuNumero: Type.String({ minLength: 1, maxLength: 15 }),
    /** Inter's reference: 2.50 to 99,999,999.99. */
    valorNominal: Type.Number({ minimum: 2.5, maximum: 99_999_999.99, multipleOf: 0.01 }),
    dataVencimento: InterDate,
    /** Days after the due date the charge can still be paid before Inter cancels it: 0 to 60. */
    numDiasAgenda: Type.Integer({ minimum: 0, maximum: 60 }),
    pagador: Payer,
    desconto: Type.Optional(Discount),
    multa: Type.Optional(Fine),
    mora: Type.Optional(Interest),
    mensagem: Type.Optional(Message),
  },
  closed,
);
export type CreateChargeRequest = Static<typeof CreateChargeRequest>;

export const CreateChargeResponse = Type.Object({ codigoSolicitacao: Type.String({ minLength: 1 }) });
export type CreateChargeResponse = Static<typeof CreateChargeResponse>;

// ---------------------------------------------------------------------------------------------------
// GET /cobranca/v3/cobrancas/{codigoSolicitacao} and the list GET /cobranca/v3/cobrancas

export const ChargeDetails = Type.Object({
  codigoSolicitacao: Type.String({ minLength: 1 }),
  seuNumero: Type.String(),
  dataEmissao: Type.Optional(InterDate),
  dataVencimento: InterDate,
  valorNominal: ReaisOnWire,
  tipoCobranca: Type.Optional(Type.String()),
  situacao: InterSituation,
  dataSituacao: Type.Optional(InterDate),
  valorTotalRecebido: Type.Optional(ReaisOnWire),
  origemRecebimento: Type.Optional(oneOf(['BOLETO', 'PIX'] as const)),
  motivoCancelamento: Type.Optional(Type.String()),
  arquivada: Type.Optional(Type.Boolean()),
});
export type ChargeDetails = Static<typeof ChargeDetails>;

/** nossoNumero may be absent while the charge is EM_PROCESSAMENTO (Inter's reference). */
export const SlipData = Type.Object({
  nossoNumero: Type.Optional(Type.String({ minLength: 1, maxLength: 11 })),
  codigoBarras: Type.String({ pattern: '^\\d{44}$' }),
  linhaDigitavel: Type.String({ pattern: '^\\d{47}$' }),
});
export type SlipData = Static<typeof SlipData>;

export const PixData = Type.Object({
  txid: Type.String({ minLength: 1 }),
  pixCopiaECola: Type.String({ minLength: 1 }),
});
export type PixData = Static<typeof PixData>;

/** One charge: `boleto` and `pix` only once it is issued (not while EM_PROCESSAMENTO or after FALHA_EMISSAO). */
export const ChargeView = Type.Object({
  cobranca: ChargeDetails,
  boleto: Type.Optional(SlipData),
  pix: Type.Optional(PixData),
});
export type ChargeView = Static<typeof ChargeView>;

/**
 * Query of the list endpoint, as Inter's reference names it: dataInicial and dataFinal are required;
 * paging is `paginacao.itensPorPagina` (at most 1000, default 100) and `paginacao.paginaAtual` (from 0).
 */
export const ListChargesQuery = Type.Object(
  {
    dataInicial: InterDate,
    dataFinal: InterDate,
    filtrarDataPor: Type.Optional(oneOf(['VENCIMENTO', 'EMISSAO', 'PAGAMENTO'] as const)),
    situacao: Type.Optional(InterSituation),
    pessoaPagadora: Type.Optional(Type.String()),
    cpfCnpjPessoaPagadora: Type.Optional(Type.String({ minLength: 1, maxLength: 18 })),
    seuNumero: Type.Optional(Type.String({ minLength: 1, maxLength: 15 })),
    tipoCobranca: Type.Optional(oneOf(['SIMPLES', 'PARCELADO', 'RECORRENTE'] as const)),
    'paginacao.itensPorPagina': Type.Optional(Type.String({ pattern: '^\\d+$' })),
    'paginacao.paginaAtual': Type.Optional(Type.String({ pattern: '^\\d+$' })),
    ordenarPor: Type.Optional(
      oneOf([
        'PESSOA_PAGADORA',
        'TIPO_COBRANCA',
        'CODIGO_COBRANCA',
        'IDENTIFICADOR',
        'DATA_EMISSAO',
        'DATA_VENCIMENTO',
        'VALOR',
        'STATUS',
      ] as const),
    ),
    tipoOrdenacao: Type.Optional(oneOf(['ASC', 'DESC'] as const)),
  },
  closed,
);
export type ListChargesQuery = Static<typeof ListChargesQuery>;

/** A page of the list: only `cobrancas` is required by Inter's reference. */
export const ChargeList = Type.Object({
  totalPaginas: Type.Optional(Type.Integer({ minimum: 0 })),
  totalElementos: Type.Optional(Type.Integer({ minimum: 0 })),
  ultimaPagina: Type.Optional(Type.Boolean()),
  primeiraPagina: Type.Optional(Type.Boolean()),
  tamanhoPagina: Type.Optional(Type.Integer({ minimum: 0 })),
  numeroDeElementos: Type.Optional(Type.Integer({ minimum: 0 })),
  cobrancas: Type.Array(ChargeView),
});
export type ChargeList = Static<typeof ChargeList>;

// ---------------------------------------------------------------------------------------------------
// POST /cobranca/v3/cobrancas/{codigoSolicitacao}/cancelar, GET .../pdf

export const CancelChargeRequest = Type.Object(
  { motivoCancelamento: Type.String({ minLength: 1, maxLength: 50 }) },
  closed,
);
export type CancelChargeRequest = Static<typeof CancelChargeRequest>;

export const PdfResponse = Type.Object({ pdf: Type.String({ minLength: 1, contentEncoding: 'base64' }) });
export type PdfResponse = Static<typeof PdfResponse>;

// ---------------------------------------------------------------------------------------------------
// PUT /cobranca/v3/cobrancas/webhook, and what Inter then POSTs to that URL

/**
 * The PUT body. Inter's reference requires https:// (receivables-svc refuses to start in production
 * with an http RECEIVABLES_PUBLIC_URL); http is allowed here for the development sandbox.
 */
export const WebhookRegistration = Type.Object(
  { webhookUrl: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' }) },
  closed,
);
export type WebhookRegistration = Static<typeof WebhookRegistration>;

/** GET /cobranca/v3/cobrancas/webhook: the webhook set (404 when none is). */
export const WebhookView = Type.Object({
  webhookUrl: Type.String({ minLength: 1 }),
  criacao: Type.Optional(Type.String()),
  atualizacao: Type.Optional(Type.String()),
});
export type WebhookView = Static<typeof WebhookView>;

/** One CallbackCobranca: only codigoSolicitacao, situacao and dataHoraSituacao are required by the reference. */
export const WebhookItem = Type.Object({
  codigoSolicitacao: Type.String({ minLength: 1 }),
  seuNumero: Type.Optional(Type.String({ maxLength: 15 })),
  situacao: oneOf(INTER_CALLBACK_SITUATIONS),
  /** Date and time of the change (ISO 8601, e.g. 2026-11-23T15:04:05.000Z or a local date-time). */
  dataHoraSituacao: Type.String({ minLength: 10 }),
  valorTotalRecebido: Type.Optional(ReaisOnWire),
  origemRecebimento: Type.Optional(oneOf(['BOLETO', 'PIX'] as const)),
  nossoNumero: Type.Optional(Type.String()),
  codigoBarras: Type.Optional(Type.String()),
  linhaDigitavel: Type.Optional(Type.String()),
  txid: Type.Optional(Type.String()),
  pixCopiaECola: Type.Optional(Type.String()),
});
export type WebhookItem = Static<typeof WebhookItem>;

/** The webhook POST body: a JSON array of charge updates. */
export const WebhookBody = Type.Array(WebhookItem, { minItems: 1 });
export type WebhookBody = Static<typeof WebhookBody>;

// ---------------------------------------------------------------------------------------------------
// Errors: Inter answers application/problem+json-like bodies in Portuguese field names.

export const Violation = Type.Object({
  razao: Type.String(),
  propriedade: Type.String(),
  valor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

export const ErrorBody = Type.Object({
  title: Type.String(),
  status: Type.Optional(Type.Integer()),
  detail: Type.Optional(Type.String()),
  timestamp: Type.Optional(Type.String()),
  violacoes: Type.Optional(Type.Array(Violation)),
});
export type ErrorBody = Static<typeof ErrorBody>;

/** Every schema above, by name (for tests that walk them all). */
export const INTER_SCHEMAS: Record<string, TSchema> = {
  TokenRequest,
  TokenResponse,
  CreateChargeRequest,
  CreateChargeResponse,
  ChargeView,
  ListChargesQuery,
  ChargeList,
  CancelChargeRequest,
  PdfResponse,
  WebhookRegistration,
  WebhookView,
  WebhookBody,
  ErrorBody,
};
