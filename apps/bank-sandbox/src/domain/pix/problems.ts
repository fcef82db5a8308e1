/**
 * The standard's errors (RFC 7807 `Problema`): `{ type, title, status, detail, violacoes? }`, the type
 * being https://pix.bcb.gov.br/api/v2/error/<TipoErro> with the error names of the standard's document.
 */
export interface Violacao {
  razao: string;
  propriedade?: string;
  valor?: string;
}

export interface Problema {
  type: string;
  title: string;
  status: number;
  detail?: string;
  violacoes?: Violacao[];
}

export const ERROR_TYPE_ROOT = 'https://pix.bcb.gov.br/api/v2/error/';

export class PixApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    readonly title: string,
    readonly detail: string,
    readonly violacoes: Violacao[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  problem(): Problema {
    return {
      type: `${ERROR_TYPE_ROOT}${this.errorType}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(this.violacoes.length > 0 ? { violacoes: this.violacoes } : {}),
    };
  }
}

/** A request that breaks the schema or the rules of its operation: 400 with the operation's error type. */
export const invalid = (
  errorType: string,
  violacoes: Violacao[],
  detail = 'A requisição não respeita o schema ou está semanticamente errada.',
) => new PixApiError(400, errorType, 'Requisição inválida.', detail, violacoes);

export const notFound = (errorType: string, detail: string) =>
  new PixApiError(404, errorType, 'Não Encontrado', detail);

export const accessDenied = () =>
  new PixApiError(
    403,
    'AcessoNegado',
    'Acesso Negado',
    'Requisição de participante autenticado que viola alguma regra de autorização.',
  );

export const unauthorized = (detail: string) => new PixApiError(401, 'AcessoNegado', 'Não Autorizado', detail);

export const unavailable = () =>
  new PixApiError(
    503,
    'ServicoIndisponivel',
    'Serviço Indisponível',
    'Serviço não está disponível no momento. Serviço solicitado pode estar em manutenção ou fora da janela de funcionamento.',
  );

export const tooManyRequests = (limit: number, retryAfterSeconds: number) =>
  new PixApiError(
    429,
    'RequisicaoInvalida',
    'Too Many Requests',
    `limite de ${limit} chamadas por minuto excedido`,
    [],
    {
      'retry-after': String(retryAfterSeconds),
    },
  );

export const internalError = () =>
  new PixApiError(500, 'ErroInternoDoServidor', 'Erro Interno', 'Condição inesperada ao processar requisição.');
