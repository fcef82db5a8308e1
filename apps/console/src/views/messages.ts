/**
 * Every text the console shows, in pt-BR (the default: its users are Brazilian ERP support staff)
 * and in English (on request, the `lang` cookie). A plain typed catalog rather than i18next or
 * similar: the pages are rendered on the server from a fixed set of strings, so a key lookup plus
 * `{name}` substitution is all that is needed, and TypeScript proves that both languages have every
 * key (the `en` object is typed by the pt-BR keys) with no dependency and no runtime loading.
 *
 * Pages add their keys in a group under a comment naming the page. `{name}` is replaced by the
 * variable of that name (see Formats.t in ./locale).
 */

const ptBR = {
  // Layout and navigation
  'layout.brand': 'Console de pagamentos',
  'layout.titleSuffix': 'Console de pagamentos',
  'layout.nav.charges': 'Cobranças',
  'layout.nav.callbacks': 'Callbacks',
  'layout.nav.booklets': 'Carnês',
  'layout.nav.main': 'principal',
  'layout.who.tenant': 'cliente {tenantId}',
  'layout.who.operator': 'operador',
  'layout.logout': 'Sair',
  'layout.language': 'Idioma',
  'layout.switchToEnglish': 'English',
  'layout.switchToPortuguese': 'Português',

  // Error page
  'error.back': 'Voltar ao console',
  'error.request': 'requisição',
  'error.title.400': 'Pedido inválido',
  'error.title.401': 'Não autenticado',
  'error.title.403': 'Não permitido',
  'error.title.404': 'Não encontrado',
  'error.title.409': 'Conflito',
  'error.title.422': 'Dados inválidos',
  'error.title.429': 'Muitas tentativas',
  'error.title.500': 'Erro interno',
  'error.title.502': 'Gateway indisponível',
  'error.title.503': 'Serviço indisponível',
  'error.title.504': 'O gateway não respondeu a tempo',
  'error.title.other': 'Erro',
  'error.internal': 'Algo deu errado do nosso lado; o erro foi registrado.',
} as const;

export type MessageKey = keyof typeof ptBR;

const en: Record<MessageKey, string> = {
  // Layout and navigation
  'layout.brand': 'Payments console',
  'layout.titleSuffix': 'Payments console',
  'layout.nav.charges': 'Charges',
  'layout.nav.callbacks': 'Callbacks',
  'layout.nav.booklets': 'Booklets',
  'layout.nav.main': 'main',
  'layout.who.tenant': 'tenant {tenantId}',
  'layout.who.operator': 'operator',
  'layout.logout': 'Log out',
  'layout.language': 'Language',
  'layout.switchToEnglish': 'English',
  'layout.switchToPortuguese': 'Português',

  // Error page
  'error.back': 'Back to the console',
  'error.request': 'request',
  'error.title.400': 'Bad request',
  'error.title.401': 'Not signed in',
  'error.title.403': 'Not allowed',
  'error.title.404': 'Not found',
  'error.title.409': 'Conflict',
  'error.title.422': 'Invalid input',
  'error.title.429': 'Too many requests',
  'error.title.500': 'Internal error',
  'error.title.502': 'Gateway unavailable',
  'error.title.503': 'Service unavailable',
  'error.title.504': 'The gateway did not answer in time',
  'error.title.other': 'Error',
  'error.internal': 'Something went wrong on our side; it has been logged.',
};

export const MESSAGES: { readonly 'pt-BR': Record<MessageKey, string>; readonly en: Record<MessageKey, string> } = {
  'pt-BR': ptBR,
  en,
};
