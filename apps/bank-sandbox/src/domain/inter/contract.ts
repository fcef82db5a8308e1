import { Type, type Static } from '@sinclair/typebox';

/**
 * The Inter dialect's own contract: Banco Inter's "API Cobrança (Boleto com Pix)" v3 and its OAuth v2
 * token endpoint, transcribed from Inter's API reference (developers.inter.co/references/cobranca-bolepix
 * and /references/token), independently of our adapter's schemas (@payments/inter-cobranca), so a wrong
 * schema on one side is not repeated on the other. Names are Inter's; limits, enums and required fields
 * are the reference's. Requests are not closed (the reference does not forbid other fields).
 */

/** A string enum of the reference (JSON Schema `enum`), typed as the union of its values. */
const literalUnion = <T extends readonly string[]>(values: T, options: { default?: T[number] } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

// --- enums (components.schemas.*Enum) ----------------------------------------------------------------

export const SITUACOES_COBRANCA = [
  'RECEBIDO',
  'A_RECEBER',
  'MARCADO_RECEBIDO',
  'ATRASADO',
  'CANCELADO',
  'EXPIRADO',
  'FALHA_EMISSAO',
  'EM_PROCESSAMENTO',
  'PROTESTO',
] as const;
export type SituacaoCobranca = (typeof SITUACOES_COBRANCA)[number];
export const SituacaoCobrancaEnum = literalUnion(SITUACOES_COBRANCA);

/** The situations a callback can carry (SituacaoCobrancaCallbackEnum): no ATRASADO, EM_PROCESSAMENTO, PROTESTO. */
export const SITUACOES_CALLBACK = [
  'RECEBIDO',
  'A_RECEBER',
  'MARCADO_RECEBIDO',
  'CANCELADO',
  'EXPIRADO',
  'FALHA_EMISSAO',
] as const;
export type SituacaoCallback = (typeof SITUACOES_CALLBACK)[number];
export const SituacaoCobrancaCallbackEnum = literalUnion(SITUACOES_CALLBACK);

export const ORIGENS_RECEBIMENTO = ['BOLETO', 'PIX'] as const;
export type OrigemRecebimento = (typeof ORIGENS_RECEBIMENTO)[number];
export const OrigemRecebimentoEnum = literalUnion(ORIGENS_RECEBIMENTO);

export const TipoCobrancaEnum = literalUnion(['SIMPLES', 'PARCELADO', 'RECORRENTE'] as const);
export const FILTRAR_DATA_POR = ['VENCIMENTO', 'EMISSAO', 'PAGAMENTO'] as const;
export const FiltrarDataPorEnum = literalUnion(FILTRAR_DATA_POR, { default: 'VENCIMENTO' });
export const ORDENAR_POR = [
  'PESSOA_PAGADORA',
  'TIPO_COBRANCA',
  'CODIGO_COBRANCA',
  'IDENTIFICADOR',
  'DATA_EMISSAO',
  'DATA_VENCIMENTO',
  'VALOR',
  'STATUS',
] as const;
export type OrdenarPor = (typeof ORDENAR_POR)[number];
export const OrdenarCobrancasPorEnum = literalUnion(ORDENAR_POR, { default: 'PESSOA_PAGADORA' });
export const TipoOrdenacaoCobrancasEnum = literalUnion(['ASC', 'DESC'] as const, { default: 'ASC' });
export const FORMAS_RECEBIMENTO = ['BOLETO', 'PIX', 'SEM_FORMA_PAGAMENTO'] as const;
export const FormaRecebimentoEnum = literalUnion(FORMAS_RECEBIMENTO);
export const UFS = [
  'AC',
  'AL',
  'AP',
  'AM',
  'BA',
  'CE',
  'DF',
  'ES',
  'GO',
  'MA',
  'MT',
  'MS',
  'MG',
  'PA',
  'PB',
  'PR',
  'PE',
  'PI',
  'RJ',
  'RN',
  'RS',
  'RO',
  'RR',
  'SC',
  'SP',
  'SE',
  'TO',
] as const;
export const EnumUF = literalUnion(UFS);

/** The OAuth scopes of the Cobrança API ("Escopo requerido"). */
export const SCOPES = { read: 'boleto-cobranca.read', write: 'boleto-cobranca.write' } as const;

const date = Type.String({ format: 'date' });
/** "Formato aceito: yyyy-MM-dd'T'HH:mm[:ss][.SSS]XXX": seconds optional, an offset required. */
const interDateTime = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$',
});
/** Received amounts: a decimal string with two places. */
const reaisText = Type.String({ pattern: '^\\d{1,10}\\.\\d{2}$' });
const txid = Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$' });

// --- token (token.json) --------------------------------------------------------------------------------

export const TokenRequest = Type.Object({
  client_id: Type.String({ minLength: 1 }),
  client_secret: Type.String({ minLength: 1 }),
  grant_type: Type.Literal('client_credentials'),
  scope: Type.String({ minLength: 1 }),
});
export type TokenRequest = Static<typeof TokenRequest>;

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.String(),
  expires_in: Type.Number(),
  scope: Type.String(),
});
export type TokenResponse = Static<typeof TokenResponse>;

// --- errors (Problema, Violacao) -------------------------------------------------------------------------

export const Violacao = Type.Object({
  razao: Type.Optional(Type.String()),
  propriedade: Type.Optional(Type.String()),
  valor: Type.Optional(Type.String()),
});
export type Violacao = Static<typeof Violacao>;

export const Problema = Type.Object({
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.Optional(Type.String()),
  timestamp: Type.Optional(Type.String()),
  violacoes: Type.Optional(Type.Array(Violacao)),
});
export type Problema = Static<typeof Problema>;

// --- create (EmitirCobrancaRequestBody) ------------------------------------------------------------------

export const PagadorBase = {
  cpfCnpj: Type.String({ minLength: 11, maxLength: 18 }),
  tipoPessoa: literalUnion(['FISICA', 'JURIDICA'] as const),
  nome: Type.String({ minLength: 1, maxLength: 100 }),
  endereco: Type.String({ minLength: 1, maxLength: 100 }),
  bairro: Type.Optional(Type.String({ maxLength: 60 })),
  cidade: Type.String({ minLength: 1, maxLength: 60 }),
  uf: EnumUF,
  cep: Type.String({ minLength: 8, maxLength: 8 }),
};

export const Pagador = Type.Object({
  ...PagadorBase,
  email: Type.Optional(Type.String({ maxLength: 50 })),
  ddd: Type.Optional(Type.String({ maxLength: 2 })),
  telefone: Type.Optional(Type.String({ maxLength: 9 })),
  numero: Type.Optional(Type.String({ maxLength: 10 })),
  complemento: Type.Optional(Type.String({ maxLength: 30 })),
});
export type Pagador = Static<typeof Pagador>;

export const BeneficiarioBase = Type.Object(PagadorBase);

export const DescontoTaxa = Type.Object({
  codigo: Type.Literal('PERCENTUALDATAINFORMADA'),
  quantidadeDias: Type.Integer(),
  taxa: Type.Number(),
});
export const DescontoValor = Type.Object({
  codigo: Type.Literal('VALORFIXODATAINFORMADA'),
  quantidadeDias: Type.Integer(),
  valor: Type.Number(),
});
export const Desconto = Type.Union([DescontoTaxa, DescontoValor]);
export type Desconto = Static<typeof Desconto>;

export const MultaTaxa = Type.Object({ codigo: Type.Literal('PERCENTUAL'), taxa: Type.Number() });
export const MultaValor = Type.Object({ codigo: Type.Literal('VALORFIXO'), valor: Type.Number() });
export const Multa = Type.Union([MultaTaxa, MultaValor]);
export type Multa = Static<typeof Multa>;

export const MoraTaxa = Type.Object({ codigo: Type.Literal('TAXAMENSAL'), taxa: Type.Number() });
export const MoraValor = Type.Object({ codigo: Type.Literal('VALORDIA'), valor: Type.Number() });
export const Mora = Type.Union([MoraTaxa, MoraValor]);
export type Mora = Static<typeof Mora>;

const linha = Type.Optional(Type.String({ maxLength: 78 }));
export const Mensagem = Type.Object({ linha1: linha, linha2: linha, linha3: linha, linha4: linha, linha5: linha });

export const NotaFiscal = Type.Object({
  chaveNFe: Type.String({ minLength: 44, maxLength: 44, pattern: '^[0-9]+$' }),
  numero: Type.Integer(),
  serie: Type.Integer(),
  dataEmissao: date,
  parcela: Type.Optional(Type.Integer()),
  naturezaOperacao: Type.Optional(Type.String()),
});

export const EmitirCobrancaRequestBody = Type.Object({
  seuNumero: Type.String({ minLength: 1, maxLength: 15 }),
  valorNominal: Type.Number({ minimum: 2.5, maximum: 99999999.99 }),
  dataVencimento: date,
  numDiasAgenda: Type.Integer({ minimum: 0, maximum: 60 }),
  pagador: Pagador,
  desconto: Type.Optional(Desconto),
  multa: Type.Optional(Multa),
  mora: Type.Optional(Mora),
  mensagem: Type.Optional(Mensagem),
  beneficiarioFinal: Type.Optional(BeneficiarioBase),
  formasRecebimento: Type.Optional(Type.Array(FormaRecebimentoEnum, { uniqueItems: true, minItems: 1 })),
  notaFiscal: Type.Optional(NotaFiscal),
});
export type EmitirCobrancaRequestBody = Static<typeof EmitirCobrancaRequestBody>;

export const EmitirCobrancaAsyncResponse = Type.Object({ codigoSolicitacao: Type.String() });
export type EmitirCobrancaAsyncResponse = Static<typeof EmitirCobrancaAsyncResponse>;

// --- consult (CobrancaDetalhadaResponseBody) -------------------------------------------------------------

export const BoletoCobranca = Type.Object({
  nossoNumero: Type.Optional(Type.String({ maxLength: 11 })),
  codigoBarras: Type.String({ minLength: 44, maxLength: 44 }),
  linhaDigitavel: Type.String({ minLength: 47, maxLength: 47 }),
});
export type BoletoCobranca = Static<typeof BoletoCobranca>;

export const PixCobranca = Type.Object({ txid, pixCopiaECola: Type.String() });
export type PixCobranca = Static<typeof PixCobranca>;

export const MultaMoraResponse = Type.Object({
  codigo: Type.String(),
  taxa: Type.Optional(Type.Number()),
  valor: Type.Optional(Type.Number()),
});

export const CobrancaDetalhada = Type.Object({
  codigoSolicitacao: Type.String(),
  seuNumero: Type.String(),
  dataEmissao: date,
  dataVencimento: date,
  valorNominal: Type.Number(),
  tipoCobranca: TipoCobrancaEnum,
  situacao: SituacaoCobrancaEnum,
  dataSituacao: Type.Optional(date),
  valorTotalRecebido: Type.Optional(reaisText),
  origemRecebimento: Type.Optional(OrigemRecebimentoEnum),
  motivoCancelamento: Type.Optional(Type.String()),
  arquivada: Type.Optional(Type.Boolean()),
  descontos: Type.Optional(Type.Array(Desconto, { maxItems: 3 })),
  multa: Type.Optional(MultaMoraResponse),
  mora: Type.Optional(MultaMoraResponse),
  pagador: Type.Optional(Pagador),
});

export const CobrancaDetalhadaResponseBody = Type.Object({
  cobranca: CobrancaDetalhada,
  boleto: Type.Optional(BoletoCobranca),
  pix: Type.Optional(PixCobranca),
  notaFiscal: Type.Optional(NotaFiscal),
});
export type CobrancaDetalhadaResponseBody = Static<typeof CobrancaDetalhadaResponseBody>;

// --- list (GET /cobrancas: CobrancasResponse) -----------------------------------------------------------

/** A list item's charge (schema "cobranca"): valorNominal is a decimal string here, a number in the consult. */
export const CobrancaResumo = Type.Object({
  codigoSolicitacao: Type.String(),
  seuNumero: Type.String(),
  situacao: SituacaoCobrancaEnum,
  dataSituacao: Type.Optional(date),
  dataEmissao: Type.Optional(date),
  dataVencimento: Type.Optional(date),
  valorNominal: reaisText,
  valorTotalRecebido: Type.Optional(reaisText),
  origemRecebimento: Type.Optional(OrigemRecebimentoEnum),
  tipoCobranca: Type.Optional(TipoCobrancaEnum),
  pagador: Type.Object({ nome: Type.String(), cpfCnpj: Type.String() }),
});

export const CobrancaResponse = Type.Object({
  cobranca: CobrancaResumo,
  boleto: Type.Optional(BoletoCobranca),
  pix: Type.Optional(PixCobranca),
});
export type CobrancaResponse = Static<typeof CobrancaResponse>;

export const CobrancasResponse = Type.Object({
  totalPaginas: Type.Integer({ minimum: 1 }),
  totalElementos: Type.Integer({ minimum: 0 }),
  tamanhoPagina: Type.Integer({ minimum: 1 }),
  primeiraPagina: Type.Boolean(),
  ultimaPagina: Type.Boolean(),
  numeroDeElementos: Type.Integer({ minimum: 0 }),
  cobrancas: Type.Array(CobrancaResponse),
});
export type CobrancasResponse = Static<typeof CobrancasResponse>;

/** GET /cobrancas's query (string values, coerced to the reference's types when checked). */
export const ListarCobrancasQuery = Type.Object({
  dataInicial: date,
  dataFinal: date,
  filtrarDataPor: Type.Optional(FiltrarDataPorEnum),
  situacao: Type.Optional(SituacaoCobrancaEnum),
  pessoaPagadora: Type.Optional(Type.String()),
  cpfCnpjPessoaPagadora: Type.Optional(Type.String({ minLength: 1, maxLength: 18 })),
  seuNumero: Type.Optional(Type.String({ maxLength: 15 })),
  tipoCobranca: Type.Optional(TipoCobrancaEnum),
  'paginacao.itensPorPagina': Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  'paginacao.paginaAtual': Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  ordenarPor: Type.Optional(OrdenarCobrancasPorEnum),
  tipoOrdenacao: Type.Optional(TipoOrdenacaoCobrancasEnum),
});
export type ListarCobrancasQuery = Static<typeof ListarCobrancasQuery>;

// --- cancel, sandbox pay -------------------------------------------------------------------------------

export const CancelarCobrancaRequestBody = Type.Object({
  motivoCancelamento: Type.String({ minLength: 1, maxLength: 50 }),
});
export type CancelarCobrancaRequestBody = Static<typeof CancelarCobrancaRequestBody>;

/** POST /cobrancas/{codigoSolicitacao}/pagar: Inter's own sandbox only. */
export const PagamentoCobrancaRequestBody = Type.Object({ pagarCom: OrigemRecebimentoEnum });
export type PagamentoCobrancaRequestBody = Static<typeof PagamentoCobrancaRequestBody>;

// --- webhook --------------------------------------------------------------------------------------------

/** PUT /cobrancas/webhook: "Deve iniciar obrigatoriamente com https://". */
export const WebhookSolicitado = Type.Object({
  webhookUrl: Type.String({ format: 'uri', pattern: '^https://[^\\s]*$' }),
});
/** The same in development, where the sandbox (like the rest of it) also accepts http:// URLs. */
export const WebhookSolicitadoDevelopment = Type.Object({
  webhookUrl: Type.String({ format: 'uri', pattern: '^https?://[^\\s]*$' }),
});
export type WebhookSolicitado = Static<typeof WebhookSolicitado>;

export const WebhookCompleto = Type.Object({
  webhookUrl: Type.String({ format: 'uri' }),
  criacao: Type.String({ format: 'date-time' }),
  atualizacao: Type.Optional(Type.String({ format: 'date-time' })),
});
export type WebhookCompleto = Static<typeof WebhookCompleto>;

/** One item of a notice (the POST to the webhook carries an array of them). */
export const CallbackCobranca = Type.Object({
  codigoSolicitacao: Type.String(),
  seuNumero: Type.Optional(Type.String({ maxLength: 15 })),
  situacao: SituacaoCobrancaCallbackEnum,
  dataHoraSituacao: Type.String({ format: 'date-time' }),
  valorTotalRecebido: Type.Optional(reaisText),
  origemRecebimento: Type.Optional(OrigemRecebimentoEnum),
  nossoNumero: Type.Optional(Type.String({ maxLength: 11 })),
  codigoBarras: Type.Optional(Type.String({ minLength: 44, maxLength: 44 })),
  linhaDigitavel: Type.Optional(Type.String({ minLength: 47, maxLength: 47 })),
  txid: Type.Optional(txid),
  pixCopiaECola: Type.Optional(Type.String()),
});
export type CallbackCobranca = Static<typeof CallbackCobranca>;

export const CallbackAttemptPageItem = Type.Object({
  webhookUrl: Type.Optional(Type.String()),
  payload: Type.Array(CallbackCobranca),
  numeroTentativa: Type.Integer(),
  dataHoraDisparo: Type.String({ format: 'date-time' }),
  sucesso: Type.Boolean(),
  httpStatus: Type.Optional(Type.Integer()),
  mensagemErro: Type.Optional(Type.String()),
});
export type CallbackAttemptPageItem = Static<typeof CallbackAttemptPageItem>;

export const CallbackAttemptPage = Type.Object({
  totalElementos: Type.Integer(),
  totalPaginas: Type.Integer(),
  primeiraPagina: Type.Boolean(),
  ultimaPagina: Type.Boolean(),
  data: Type.Array(CallbackAttemptPageItem),
});
export type CallbackAttemptPage = Static<typeof CallbackAttemptPage>;

/** GET /cobrancas/webhook/callbacks's query (string values, coerced when checked). */
export const CallbacksQuery = Type.Object({
  dataHoraInicio: interDateTime,
  dataHoraFim: interDateTime,
  pagina: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  tamanhoPagina: Type.Optional(Type.Integer({ minimum: 10, maximum: 50, default: 20 })),
  codigoSolicitacao: Type.Optional(Type.String({ format: 'uuid' })),
});
export type CallbacksQuery = Static<typeof CallbacksQuery>;

export const RetryCallbacksRequestBody = Type.Object({
  codigoSolicitacao: Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 50 }),
});
export type RetryCallbacksRequestBody = Static<typeof RetryCallbacksRequestBody>;

export const RetryCallbackResponse = Type.Object({ foundIds: Type.Array(Type.String()) });
export type RetryCallbackResponse = Static<typeof RetryCallbackResponse>;

export const PdfResponse = Type.Object({ pdf: Type.String() });
export type PdfResponse = Static<typeof PdfResponse>;
