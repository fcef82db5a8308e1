import Ajv from 'ajv';
import addFormats from 'ajv-formats';

/**
 * The oracle of the Inter dialect's tests: the answers of Banco Inter's "API Cobrança (Boleto com Pix)"
 * v3 and its token endpoint, transcribed here by hand as plain JSON Schema from Inter's API reference
 * (developers.inter.co/references/cobranca-bolepix, /references/token), field by field. Independent of
 * the sandbox's src/domain/inter/contract.ts and of the adapter's schemas, so neither can vouch for itself.
 */

const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

const SITUACAO = [
  'RECEBIDO',
  'A_RECEBER',
  'MARCADO_RECEBIDO',
  'ATRASADO',
  'CANCELADO',
  'EXPIRADO',
  'FALHA_EMISSAO',
  'EM_PROCESSAMENTO',
  'PROTESTO',
];
const SITUACAO_CALLBACK = ['RECEBIDO', 'A_RECEBER', 'MARCADO_RECEBIDO', 'CANCELADO', 'EXPIRADO', 'FALHA_EMISSAO'];
const ORIGEM = ['BOLETO', 'PIX'];
const reais = { type: 'string', pattern: '^\\d{1,10}\\.\\d{2}$' };
const date = { type: 'string', format: 'date' };

const boleto = {
  type: 'object',
  required: ['linhaDigitavel', 'codigoBarras'],
  properties: {
    nossoNumero: { type: 'string', maxLength: 11 },
    codigoBarras: { type: 'string', minLength: 44, maxLength: 44 },
    linhaDigitavel: { type: 'string', minLength: 47, maxLength: 47 },
  },
};
const pix = {
  type: 'object',
  required: ['txid', 'pixCopiaECola'],
  properties: { txid: { type: 'string', pattern: '^[a-zA-Z0-9]{26,35}$' }, pixCopiaECola: { type: 'string' } },
};

/** POST /oauth/v2/token 200 (TokenResponse). */
export const tokenResponse = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in', 'scope'],
  properties: {
    access_token: { type: 'string' },
    token_type: { type: 'string' },
    expires_in: { type: 'number' },
    scope: { type: 'string' },
  },
};

/** Every refusal (Problema): title and status required, violacoes of { razao, propriedade, valor }. */
export const problema = {
  type: 'object',
  required: ['title', 'status'],
  properties: {
    status: { type: 'integer' },
    title: { type: 'string' },
    detail: { type: 'string' },
    violacoes: {
      type: 'array',
      items: {
        type: 'object',
        properties: { razao: { type: 'string' }, propriedade: { type: 'string' }, valor: { type: 'string' } },
      },
    },
  },
};

/** POST /cobrancas 200 (EmitirCobrancaAsyncResponse). */
export const emitirResponse = {
  type: 'object',
  required: ['codigoSolicitacao'],
  properties: { codigoSolicitacao: { type: 'string' } },
};

/** GET /cobrancas/{codigoSolicitacao} 200 (CobrancaDetalhadaResponseBody). */
export const cobrancaDetalhada = {
  type: 'object',
  required: ['cobranca'],
  properties: {
    cobranca: {
      type: 'object',
      required: [
        'codigoSolicitacao',
        'seuNumero',
        'valorNominal',
        'dataEmissao',
        'dataVencimento',
        'situacao',
        'tipoCobranca',
      ],
      properties: {
        codigoSolicitacao: { type: 'string' },
        seuNumero: { type: 'string' },
        dataEmissao: date,
        dataVencimento: date,
        valorNominal: { type: 'number' },
        tipoCobranca: { enum: ['SIMPLES', 'PARCELADO', 'RECORRENTE'] },
        situacao: { enum: SITUACAO },
        dataSituacao: date,
        valorTotalRecebido: reais,
        origemRecebimento: { enum: ORIGEM },
        motivoCancelamento: { type: 'string' },
        arquivada: { type: 'boolean' },
      },
    },
    boleto,
    pix,
  },
};

/** GET /cobrancas 200 (CobrancasResponse): items of schema "cobranca", valorNominal a decimal string. */
export const cobrancasResponse = {
  type: 'object',
  required: ['cobrancas'],
  properties: {
    totalPaginas: { type: 'integer', minimum: 1 },
    totalElementos: { type: 'integer', minimum: 0 },
    tamanhoPagina: { type: 'integer', minimum: 1 },
    primeiraPagina: { type: 'boolean' },
    ultimaPagina: { type: 'boolean' },
    numeroDeElementos: { type: 'integer' },
    cobrancas: {
      type: 'array',
      items: {
        type: 'object',
        required: ['cobranca'],
        properties: {
          cobranca: {
            type: 'object',
            required: ['codigoSolicitacao', 'seuNumero', 'situacao', 'valorNominal', 'pagador'],
            properties: {
              codigoSolicitacao: { type: 'string' },
              seuNumero: { type: 'string' },
              situacao: { enum: SITUACAO },
              dataSituacao: date,
              dataEmissao: date,
              dataVencimento: date,
              valorNominal: reais,
              valorTotalRecebido: reais,
              origemRecebimento: { enum: ORIGEM },
              tipoCobranca: { enum: ['SIMPLES', 'PARCELADO', 'RECORRENTE'] },
              pagador: {
                type: 'object',
                required: ['nome', 'cpfCnpj'],
                properties: { nome: { type: 'string' }, cpfCnpj: { type: 'string' } },
              },
            },
          },
          boleto,
          pix,
        },
      },
    },
  },
};

/** GET /cobrancas/webhook 200 (WebhookCompleto). */
export const webhookCompleto = {
  type: 'object',
  required: ['webhookUrl', 'criacao'],
  properties: {
    webhookUrl: { type: 'string', format: 'uri' },
    criacao: { type: 'string', format: 'date-time' },
    atualizacao: { type: 'string', format: 'date-time' },
  },
};

/** The body of a notice: an array of CallbackCobranca. */
export const callbackBody = {
  type: 'array',
  items: {
    type: 'object',
    required: ['codigoSolicitacao', 'dataHoraSituacao', 'situacao'],
    properties: {
      codigoSolicitacao: { type: 'string' },
      seuNumero: { type: 'string', maxLength: 15 },
      situacao: { enum: SITUACAO_CALLBACK },
      dataHoraSituacao: { type: 'string', format: 'date-time' },
      valorTotalRecebido: reais,
      origemRecebimento: { enum: ORIGEM },
      nossoNumero: { type: 'string', maxLength: 11 },
      codigoBarras: { type: 'string', minLength: 44, maxLength: 44 },
      linhaDigitavel: { type: 'string', minLength: 47, maxLength: 47 },
      txid: { type: 'string', pattern: '^[a-zA-Z0-9]{26,35}$' },
      pixCopiaECola: { type: 'string' },
    },
  },
};

/** GET /cobrancas/webhook/callbacks 200 (CallbackAttemptPage). */
export const callbackAttemptPage = {
  type: 'object',
  required: ['data'],
  properties: {
    totalElementos: { type: 'integer' },
    totalPaginas: { type: 'integer' },
    primeiraPagina: { type: 'boolean' },
    ultimaPagina: { type: 'boolean' },
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['payload', 'numeroTentativa', 'sucesso'],
        properties: {
          webhookUrl: { type: 'string' },
          payload: callbackBody,
          numeroTentativa: { type: 'integer' },
          dataHoraDisparo: { type: 'string', format: 'date-time' },
          sucesso: { type: 'boolean' },
          httpStatus: { type: 'integer' },
          mensagemErro: { type: 'string' },
        },
      },
    },
  },
};

/** POST /cobrancas/webhook/callbacks/retry 200 (RetryCallbackResponse). */
export const retryCallbackResponse = {
  type: 'object',
  required: ['foundIds'],
  properties: { foundIds: { type: 'array', items: { type: 'string' } } },
};

/** What is wrong with `value` against one of the schemas above (empty when it conforms). */
export function referenceProblems(schema: object, value: unknown): string[] {
  const validate = ajv.compile(schema);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
}

/** A create body as Inter's example has it (exemploEmitirCobranca), due `dueDate`. */
export function emitirBody(overrides: Record<string, unknown> = {}, dueDate = '2099-10-20'): Record<string, unknown> {
  return {
    seuNumero: '123456',
    valorNominal: 2500,
    dataVencimento: dueDate,
    numDiasAgenda: 60,
    pagador: {
      email: 'nome.sobrenome@x.com.br',
      ddd: '31',
      telefone: '999999999',
      numero: '3456',
      complemento: 'apartamento 3 bloco 4',
      cpfCnpj: '52998224725',
      tipoPessoa: 'FISICA',
      nome: 'Nome do pagador',
      endereco: 'Avenida Brasil, 1200',
      bairro: 'Centro',
      cidade: 'Belo Horizonte',
      uf: 'MG',
      cep: '30110000',
    },
    multa: { taxa: 2, codigo: 'PERCENTUAL' },
    mora: { taxa: 5, codigo: 'TAXAMENSAL' },
    mensagem: { linha1: 'mensagem 1' },
    ...overrides,
  };
}
