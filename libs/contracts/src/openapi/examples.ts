import type { ErrorCode, FieldError } from '../errors';
import { ErrorCatalog } from '../errors';
import { problemTypeUri, type Problem } from '../problem';
import type { AuthenticateResponse, RefreshTokenResponse } from '../auth';
import type { BookletRequest, BookletResponse } from '../booklet';
import type {
  BookletFailedCallback,
  BookletSentCallback,
  CallbackEventSummary,
  CallbackEventView,
  CallbackReplayRequest,
  CallbackReplayResponse,
  CallbackRetryResponse,
  CancellationCallback,
  CancellationFailedCallback,
  PaidCallback,
  RegisteredCallback,
  RegistrationFailedCallback,
} from '../callbacks';
import type { ClientCreateItem, ClientsCreateResponse, ClientUpdateRequest, ClientUpdateResponse } from '../clients';
import type { CancelResponse, ReceivableCreateItem, ReceivableDetail, ReceivablesCreateResponse } from '../receivables';
import type { ReceivableHistory } from '../receivable-history';
import type { ConsultResult, SearchRequest, SearchResultItem } from '../search';
import type { ExampleObject, JsonValue } from './types';

/**
 * Examples of the OpenAPI document: what an ERP really sends and receives (Portuguese content where the
 * wire format has it, valid CPF/CNPJ check digits, lower-case UUIDs). Each is typed with its contract
 * type, so a contract change that breaks an example fails the type check; the gateway's tests also
 * validate every example against its schema.
 */

/** A typed example value becomes a document example (contract types are JSON by construction). */
export function example<T>(summary: string, value: T): ExampleObject {
  return { summary, value: value as JsonValue };
}

export const Ids = {
  tenant: '0c7d2a51-6f3e-4b8a-9d1c-2e5f7a9b3c4d',
  clientPerson: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60',
  clientCompany: '3b9d6c2a-5e1f-4a7b-9c8d-0e1f2a3b4c5d',
  paymentSlip: 'c4a1e6f2-8b3d-4f7a-a2c5-6d9e0f1b2a3c',
  receivableSlip: '9b2d7e10-4c3a-4e8b-8f1d-2a6c5b7e9d01',
  receivablePix: '9b2d7e10-4c3a-4e8b-8f1d-2a6c5b7e9d02',
  booklet: 'e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b',
  request: 'f3b0c1de-8a4e-4d7b-9a55-2c1d0e6f7a81',
} as const;

export const EventIds = {
  registered: 'evt_registered_4c1f0e9a7b2d4e6f8a9b0c1d2e3f4a5b',
  cancelled: 'evt_cancel1_4c1f0e9a7b2d4e6f8a9b0c1d2e3f4a5b',
  bookletSent: 'evt_booklet_e1f2a3b4c5d64e7f8a9b0c1d2e3f4a5b',
} as const;

const URL_CALLBACK = 'https://erp.example.com.br/webhooks/cobrancas';
const BANK = 'https://sandbox.banco.example.com.br';

export const ACCESS_TOKEN_EXAMPLE =
  'eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCIsImtpZCI6ImstMjAyNi0wMSJ9.eyJpc3MiOiJwYXltZW50cy1nYXRld2F5IiwiYXVkIjoicGF5bWVudHMtYXBpIiwic3ViIjoiMGM3ZDJhNTEtNmYzZS00YjhhLTlkMWMtMmU1ZjdhOWIzYzRkIiwiaWF0IjoxNzcxNjAwMDAwLCJleHAiOjE3NzE2MDM2MDAsImp0aSI6IjVlOGYxYTJiLTNjNGQtNGU2Zi04YTliLTBjMWQyZTNmNGE1YiJ9.YYzWttpvKRjFzStGptV_PlUEIsiJsuAQra6W1r97paEyitYmSbl6Us3sGfofhz4yky2fXZRIWMikIpwD1oGtUQ';

/* Authentication ---------------------------------------------------------------------------------- */

export const authenticateResponse: AuthenticateResponse = {
  access_token: ACCESS_TOKEN_EXAMPLE,
  token_type: 'Bearer',
  expires_in: 3600,
};
export const refreshTokenResponse: RefreshTokenResponse = {
  access_token: ACCESS_TOKEN_EXAMPLE,
  token_type: 'bearer',
  expires_in: 3600,
};

/* Clients ----------------------------------------------------------------------------------------- */

const person: ClientCreateItem = {
  client_id: Ids.clientPerson,
  name: 'Maria da Silva',
  cnpj_cpf: '529.982.247-25',
  address: 'Rua das Flores',
  number: '123',
  neighborhood: 'Centro',
  city: 'São Paulo',
  state: 'SP',
  zip_code: '01310-100',
  complement: 'Apto 4',
  telephone: '1133334444',
  phone_number: '11999998888',
  email: 'maria@example.com',
  return_client_data: true,
};

const company: ClientCreateItem = {
  client_id: Ids.clientCompany,
  name: 'Padaria Pão Quente Ltda',
  cnpj_cpf: '11.222.333/0001-81',
  address: 'Avenida Rio Branco',
  number: '1500',
  neighborhood: 'Centro',
  city: 'Rio de Janeiro',
  state: 'RJ',
  zip_code: '20040-002',
  email: 'financeiro@paoquente.com.br',
  return_client_data: false,
};

export const clientsCreateRequest: ClientCreateItem[] = [person, company];

const personData = {
  razao: 'Maria da Silva',
  cnpj_cpf: '529.982.247-25',
  endereco: 'Rua das Flores',
  numero: '123',
  bairro: 'Centro',
  cidade: 'São Paulo',
  uf: 'SP',
  cep: '01310-100',
  complemento: 'Apto 4',
  fone: '1133334444',
  telefone_celular: '11999998888',
  email: 'maria@example.com',
};

export const clientsCreateResponse: ClientsCreateResponse = {
  status: 'success',
  message: '2 client(s) created, 0 already registered',
  total_created_clients: [{ client_id: Ids.clientPerson, data: personData }, { client_id: Ids.clientCompany }],
  clients_already_registered: [],
};

export const clientsAlreadyRegisteredResponse: ClientsCreateResponse = {
  status: 'success',
  message: '0 client(s) created, 2 already registered',
  total_created_clients: [],
  clients_already_registered: [{ client_id: Ids.clientPerson }, { client_id: Ids.clientCompany }],
};

export const clientUpdateRequest: ClientUpdateRequest = {
  name: 'Maria da Silva Souza',
  cnpj_cpf: '529.982.247-25',
  address: 'Rua Augusta',
  number: '2200',
  neighborhood: 'Jardins',
  city: 'São Paulo',
  state: 'SP',
  zip_code: '01412-100',
  complement: null,
  telephone: '1133334444',
  phone_number: '11988887777',
  email: 'maria.souza@example.com',
};

export const clientUpdateResponse: ClientUpdateResponse = {
  status: 'success',
  message: 'client updated',
  data: {
    razao: 'Maria da Silva Souza',
    cnpj_cpf: '529.982.247-25',
    endereco: 'Rua Augusta',
    numero: '2200',
    bairro: 'Jardins',
    cidade: 'São Paulo',
    uf: 'SP',
    cep: '01412-100',
    complemento: null,
    fone: '1133334444',
    telefone_celular: '11988887777',
    email: 'maria.souza@example.com',
  },
};

/* Receivables ------------------------------------------------------------------------------------- */

export const receivablesCreateRequest: ReceivableCreateItem[] = [
  {
    url_callback: URL_CALLBACK,
    client_id: Ids.clientPerson,
    payment_slip_id: Ids.paymentSlip,
    account_receivable_id: Ids.receivableSlip,
    payment_method: 1,
    items: [{ description: 'Mensalidade escolar - março/2026', quantity: 1, price: 850 }],
    due_date: '2026-03-10',
    emission_date: '2026-02-20',
    value: 850,
    discount_type: 'ValorFixoAteDataInformada',
    discount_date: '2026-03-05',
    discount_value: 50,
    fine_value: 2,
    interest_amount: 0.28,
  },
  {
    url_callback: URL_CALLBACK,
    client_id: Ids.clientCompany,
    payment_slip_id: Ids.paymentSlip,
    account_receivable_id: Ids.receivablePix,
    payment_method: 3,
    due_date: '2026-03-15',
    emission_date: '2026-02-20',
    value: 1240.2,
    discount_type: 'NaoTemDesconto',
    fine_value: 0,
    interest_amount: 0,
  },
];

export const receivablesCreateResponse: ReceivablesCreateResponse = {
  status: 'success',
  message: '2 receivable(s) received and being processed: registration with the provider is under way',
  existing: [],
};

export const receivablesCreateExistingResponse: ReceivablesCreateResponse = {
  status: 'success',
  message:
    '1 receivable(s) received and being processed: registration with the provider is under way; 1 already existed and were left as they are',
  existing: [Ids.receivableSlip],
};

export const cancelResponse: CancelResponse = {
  status: 'success',
  message: 'the receivable was sent for cancellation; the result follows by callback',
};

export const searchRequest: SearchRequest = {
  state: 'all',
  start_date: '2026-02-01',
  end_date: '2026-02-28',
  limit: 100,
};
export const searchNextPageRequest: SearchRequest = {
  ...searchRequest,
  cursor: 'eyJlIjoiMjAyNi0wMi0yMCIsImlkIjoiOWIyZDdlMTAifQ',
};

export const searchResponse: SearchResultItem[] = [
  {
    accounts_receivable_id: Ids.receivableSlip,
    client_name: 'Maria da Silva',
    status_payment: 'Aprovada',
    paymento_type: 'Pix',
    payment_date: '2026-03-04T14:05:09.123',
    amount_due: 850,
    amount_paid: 800,
    fee_amount: 7.92,
  },
  {
    accounts_receivable_id: Ids.receivablePix,
    client_name: 'Padaria Pão Quente Ltda',
    status_payment: 'Pendente',
    paymento_type: 'naodefinido',
    payment_date: null,
    amount_due: 1240.2,
    amount_paid: 0,
    fee_amount: 0,
  },
];

export const consultResponse: ConsultResult = {
  accounts_receivable_id: Ids.receivableSlip,
  client_name: 'Maria da Silva',
  status_payment: 'Aprovada',
  payment_type: 'Pix',
  payment_date: '2026-03-04T14:05:09.123',
  amount_due: 850,
  amount_paid: 800,
  fee_amount: 7.92,
};

export const receivableDetail: ReceivableDetail = {
  accounts_receivable_id: Ids.receivableSlip,
  client_id: Ids.clientPerson,
  payment_slip_id: Ids.paymentSlip,
  payment_method: 1,
  status_payment: 'Pendente',
  value: 850,
  emission_date: '2026-03-02',
  due_date: '2026-03-10',
  payer: { name: 'Maria da Silva', tax_id: '52998224725' },
};

export const consultPendingResponse: ConsultResult = {
  accounts_receivable_id: Ids.receivablePix,
  client_name: 'Padaria Pão Quente Ltda',
  status_payment: 'Pendente',
  payment_type: 'naodefinido',
  payment_date: null,
  amount_due: 1240.2,
  amount_paid: 0,
  fee_amount: 0,
};

export const historyResponse: ReceivableHistory = {
  items: [
    { at: '2026-03-02T12:00:01.204Z', from_state: null, to_state: 'pending', reason: 'received' },
    { at: '2026-03-04T17:05:09.123Z', from_state: 'pending', to_state: 'approved', reason: 'paid by pix' },
  ],
};

/* Booklets ---------------------------------------------------------------------------------------- */

export const bookletRequest: BookletRequest = { url_callback: URL_CALLBACK };

export const bookletResponse: BookletResponse = {
  success: true,
  type: 'preparing',
  message: 'the booklet of 12 installment(s) is being prepared; the download link follows by callback.',
  payment_slip_id: Ids.paymentSlip,
};

export const DOWNLOAD_EXPIRES_EXAMPLE = '1772668800';
export const DOWNLOAD_SIGNATURE_EXAMPLE = 'e2b06594ce8b0cd653792f33361d5f07bde0f07b2d4dff87bcfa53cd33da393c';

/* Callback visibility ----------------------------------------------------------------------------- */

export const callbackListResponse: CallbackEventSummary[] = [
  {
    event_id: EventIds.cancelled,
    event_type: 'receivable.cancelled',
    url: URL_CALLBACK,
    status: 'pending',
    created_at: '2026-02-21T12:00:03.204Z',
    delivered_at: null,
    attempt_count: 2,
    next_attempt_at: '2026-02-21T12:02:41.950Z',
  },
  {
    event_id: EventIds.registered,
    event_type: 'receivable.registered',
    url: URL_CALLBACK,
    status: 'delivered',
    created_at: '2026-02-20T17:32:10.512Z',
    delivered_at: '2026-02-20T17:32:10.884Z',
    attempt_count: 1,
    next_attempt_at: null,
  },
];

export const callbackRetryResponse: CallbackRetryResponse = {
  status: 'success',
  message: 'the event was queued for delivery again',
  event_id: EventIds.cancelled,
};

export const callbackReplayRequest: CallbackReplayRequest = { since: '2026-02-21T09:30:00Z' };

export const callbackReplayResponse: CallbackReplayResponse = {
  replayed: 42,
  since: '2026-02-21T09:30:00.000Z',
  until: null,
};

/* Callback payloads (webhooks) -------------------------------------------------------------------- */

export const registeredCallback: RegisteredCallback = {
  success: true,
  type: 'registered',
  accounts_receivable_id: Ids.receivableSlip,
  payment_data: {
    typeable_line: '23790448095616862379336011058009740430000124020',
    barcode: '23797404300001240200448056168623793601105800',
    our_number: '00000123',
    pix_copy_and_paste:
      '00020126450014br.gov.bcb.pix0118fulano@example.com0201x520400005303986540512.345802BR5913FULANO DE TAL6009SAO PAULO62100506ABC1236304F170',
    qrcode_image: `${BANK}/charges/00000123/qrcode.png`,
    pdf: `${BANK}/charges/00000123/slip.pdf`,
  },
};

export const registrationFailedCallback: RegistrationFailedCallback = {
  success: false,
  type: 'registered',
  accounts_receivable_id: Ids.receivablePix,
  error: { code: 'payer_rejected', message: 'the provider refused the payer document' },
};

export const cancellationCallback: CancellationCallback = {
  status: 'success',
  accounts_receivable_id: Ids.receivableSlip,
  message: 'the receivable was cancelled',
};

export const cancellationFailedCallback: CancellationFailedCallback = {
  status: 'error',
  accounts_receivable_id: Ids.receivableSlip,
  message: 'the provider could not cancel the charge: it was paid meanwhile',
};

export const paidCallback: PaidCallback = {
  success: true,
  type: 'paid',
  accounts_receivable_id: Ids.receivableSlip,
  payment_date: '2026-03-04T14:05:09.123',
  amount_paid: 800,
  fee_amount: 7.92,
  payment_type: 'Pix',
};

export const bookletSentCallback: BookletSentCallback = {
  success: true,
  type: 'sent',
  payment_slip_id: Ids.paymentSlip,
  download: `https://api.example.com.br/api/v1/bank-slip-booklet/downloads/${Ids.booklet}?expires=${DOWNLOAD_EXPIRES_EXAMPLE}&signature=${DOWNLOAD_SIGNATURE_EXAMPLE}`,
  installments: 12,
};

export const bookletFailedCallback: BookletFailedCallback = {
  success: false,
  type: 'sent',
  payment_slip_id: Ids.paymentSlip,
  error: { code: 'no_installments', message: 'every installment of this booklet was cancelled or rejected' },
};

/* Callback event details (they show the payload, so they follow the payloads) -------------------- */

export const callbackEventView: CallbackEventView = {
  event_id: EventIds.cancelled,
  event_type: 'receivable.cancelled',
  url: URL_CALLBACK,
  status: 'delivered',
  created_at: '2026-02-21T12:00:03.204Z',
  delivered_at: '2026-02-21T12:00:39.117Z',
  attempts: [
    {
      attempted_at: '2026-02-21T12:00:03.311Z',
      status_code: 503,
      error: 'HTTP 503',
      duration_ms: 142,
      response_excerpt: '{"error":"database is in maintenance, try again later"}',
    },
    {
      attempted_at: '2026-02-21T12:00:09.020Z',
      status_code: null,
      error: 'no answer within 10000 ms',
      duration_ms: 10001,
      response_excerpt: null,
    },
    {
      attempted_at: '2026-02-21T12:00:39.031Z',
      status_code: 200,
      error: null,
      duration_ms: 86,
      response_excerpt: '{"received":true}',
    },
  ],
  payload: cancellationCallback,
};

/** The detail of a booklet's sent event: its payload holds the signed download link. */
export const bookletSentEventView: CallbackEventView = {
  event_id: EventIds.bookletSent,
  event_type: 'booklet.sent',
  url: URL_CALLBACK,
  status: 'delivered',
  created_at: '2026-02-21T14:10:27.415Z',
  delivered_at: '2026-02-21T14:10:27.702Z',
  attempts: [
    {
      attempted_at: '2026-02-21T14:10:27.530Z',
      status_code: 204,
      error: null,
      duration_ms: 171,
      response_excerpt: null,
    },
  ],
  payload: bookletSentCallback,
};

/* Problems ---------------------------------------------------------------------------------------- */

/** What the gateway says for each error code (detail and, where it names fields, errors). */
const problemDetails: Record<ErrorCode, { detail: string; errors?: FieldError[] }> = {
  malformed_json: { detail: 'the request body is not valid JSON (an object or an array)' },
  idempotency_key_missing: {
    detail: 'this endpoint requires an Idempotency-Key header (any unique string, e.g. a UUID)',
    errors: [{ in: 'header', path: 'Idempotency-Key', message: 'is required' }],
  },
  idempotency_key_invalid: {
    detail: 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces',
    errors: [{ in: 'header', path: 'Idempotency-Key', message: 'is invalid' }],
  },
  unauthorized: {
    detail: 'the access token is not valid: send the access_token that POST /api/v1/authenticate returned',
  },
  token_expired: {
    detail:
      'the access token has expired: get a new one from POST /api/v1/authenticate with your integration token (POST /api/v1/refresh-token renews an access token before it expires)',
  },
  sign_in_refused: { detail: 'the e-mail, password or TOTP code is not right' },
  session_ended: { detail: 'this console session has ended: sign in again' },
  forbidden: { detail: 'this download link is not valid (altered or incomplete)' },
  sign_in_method_disabled: {
    detail:
      'signing in with an integration token is for development only: sign in with your e-mail, password and TOTP code',
  },
  not_found: { detail: `no receivable ${Ids.receivableSlip} for this tenant` },
  method_not_allowed: { detail: 'DELETE is not allowed on /api/v1/clients' },
  request_timeout: { detail: 'the request body did not arrive within 30000 ms; send the request again' },
  conflict: { detail: 'the receivable is already cancelled' },
  idempotency_request_in_progress: {
    detail: 'a request with this Idempotency-Key is still being processed; retry shortly',
  },
  gone: { detail: 'this download link has expired; request the booklet again' },
  payload_too_large: {
    detail: 'a request holds at most 1000 items; this one has 1200. Split it into several requests.',
  },
  unsupported_media_type: { detail: 'send the body as application/json' },
  no_provider_account: {
    detail: `this tenant has no provider account to register charges with; an operator sets it with: npm run admin -- tenant account --tenant ${Ids.tenant} --provider sandbox|inter|pix --beneficiary-name "<name>" --beneficiary-tax-id <cnpj or cpf> ...`,
  },
  pix_key_required: {
    detail: "the tenant's bank account has no PIX key, so it cannot issue PIX charges; nothing was stored",
    errors: [{ path: '/0/payment_method', message: 'a PIX charge (3) needs a PIX key on the bank account' }],
  },
  slip_not_supported: {
    detail: "the tenant's bank account takes PIX charges only; nothing was stored",
    errors: [{ path: '/0/payment_method', message: 'this bank account issues PIX charges (3) only' }],
  },
  validation_failed: {
    detail: 'the request has invalid fields; see errors',
    errors: [
      { path: '/0/cnpj_cpf', message: 'must be a valid CPF or CNPJ (check digits)' },
      { path: '/1/due_date', message: 'must be a date YYYY-MM-DD from 2000-01-01 to 2099-12-31' },
      { path: '/2/items/0/description', message: 'must not contain U+0000 (NUL)' },
    ],
  },
  idempotency_key_reused: {
    detail: 'this Idempotency-Key was used with a different request (method, path or body); use a new key',
  },
  rotation_overlap_running: {
    detail:
      'the previous signing secret is still accepted until 2026-11-29T14:05:00.000Z; rotating now stops it at once: send confirm_overlap: true to rotate anyway',
    errors: [{ path: '/confirm_overlap', message: 'must be true to rotate before 2026-11-29T14:05:00.000Z' }],
  },
  redrive_refused: {
    detail: 'dead letter 42 names stream pay_orders, which is not a job stream of this bus: not re-driven',
  },
  rate_limited: { detail: 'more than 100 requests per second for this tenant; retry later' },
  internal_error: { detail: 'an unexpected error occurred' },
  service_unavailable: { detail: 'the receivables service did not answer in time' },
};

/** The problem+json body the gateway answers for an error code. */
export function problemExample(code: ErrorCode): ExampleObject {
  const { status, title } = ErrorCatalog[code];
  const { detail, errors } = problemDetails[code];
  const body: Problem = {
    type: problemTypeUri(code),
    title,
    status,
    detail,
    code,
    ...(errors ? { errors } : {}),
    request_id: Ids.request,
  };
  return example(title, body);
}
