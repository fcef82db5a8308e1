import { randomUUID } from 'node:crypto';
import {
  buildOpenApiDocument,
  CallbackListQuerySchema,
  ClientsCreateRequestSchema,
  ClientUpdateRequestSchema,
  compileValidator,
  createAjv,
  validateBookletRequest,
  validateReceivablesBatch,
  validateSearchRequest,
  type FieldError,
} from '../src';

// docs/architecture.md, Bad input: text with U+0000 and dates outside 2000-01-01..2099-12-31 are validation
// errors naming the field, so they never reach a service (Postgres refuses both).

const NUL = 'a\u0000b';
const NUL_MESSAGE = 'must not contain U+0000 (NUL)';
const RANGE_MESSAGE = 'must be a date YYYY-MM-DD from 2000-01-01 to 2099-12-31';

const client = (over: Record<string, unknown> = {}) => ({
  client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60',
  name: 'ACME Ltda',
  cnpj_cpf: '11.222.333/0001-81',
  ...over,
});
const receivable = (over: Record<string, unknown> = {}) => ({
  url_callback: 'https://erp.example.com/callbacks',
  client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60',
  payment_slip_id: '0c9a8b7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d',
  account_receivable_id: randomUUID(), // each its own charge: an id twice in a batch is refused
  payment_method: 1,
  items: [{ description: 'Mensalidade', quantity: 1, price: 10 }],
  due_date: '2026-12-15',
  emission_date: '2026-11-23',
  value: 10,
  discount_type: 'NaoTemDesconto',
  ...over,
});
const search = (over: Record<string, unknown> = {}) => ({
  state: 'all',
  start_date: '2026-11-01',
  end_date: '2026-11-30',
  ...over,
});

const errorsOf = (r: { ok: true } | { ok: false; errors: FieldError[] }) => (r.ok ? [] : r.errors);
const validateClients = compileValidator(ClientsCreateRequestSchema);
const validateUpdate = compileValidator(ClientUpdateRequestSchema);
const validateCallbackQuery = compileValidator(CallbackListQuerySchema);

describe('U+0000 in text', () => {
  it.each(['name', 'address', 'number', 'neighborhood', 'city', 'complement'])(
    'is refused in a client %s, naming it',
    (field) => {
      expect(errorsOf(validateClients([client(), client({ [field]: NUL })]))).toEqual([
        { path: `/1/${field}`, message: NUL_MESSAGE },
      ]);
      expect(errorsOf(validateUpdate({ ...client({ [field]: NUL }), client_id: undefined }))).toEqual([
        { path: `/${field}`, message: NUL_MESSAGE },
      ]);
    },
  );

  it.each(['cnpj_cpf', 'client_id', 'zip_code', 'telephone', 'phone_number', 'email', 'state'])(
    'is refused in a client %s (its own format or pattern)',
    (field) => {
      const paths = errorsOf(
        validateClients([client({ [field]: `\u0000${String(client()[field as 'name'] ?? '')}` })]),
      );
      expect(paths.map((e) => e.path)).toEqual([`/0/${field}`]);
    },
  );

  it('is refused alone, at the start and at the end, and a blank name is still "blank"', () => {
    for (const name of ['\u0000', '\u0000abc', 'abc\u0000', '  \u0000  '])
      expect(errorsOf(validateClients([client({ name })]))).toEqual([{ path: '/0/name', message: NUL_MESSAGE }]);
    expect(errorsOf(validateClients([client({ name: ' \t ' })]))).toEqual([
      { path: '/0/name', message: 'must not be blank' },
    ]);
    expect(validateClients([client({ name: '  Maria  ', address: '', city: '\u00e9\u{1F600}' })]).ok).toBe(true);
  });

  it('is refused in a receivable line description and url_callback, and in booklet url_callback', () => {
    const r = validateReceivablesBatch([
      receivable({ items: [{ description: NUL, quantity: 1, price: 10 }], url_callback: `https://a.example/${NUL}` }),
    ]);
    expect(errorsOf(r).map((e) => e.path)).toEqual(['/0/url_callback', '/0/items/0/description']);
    expect(errorsOf(r)[1].message).toBe(NUL_MESSAGE);
    expect(errorsOf(validateBookletRequest({ url_callback: `https://a.example/${NUL}` })).map((e) => e.path)).toEqual([
      '/url_callback',
    ]);
  });

  it('is refused in the search and callback list cursors', () => {
    expect(errorsOf(validateSearchRequest(search({ cursor: NUL })))).toEqual([
      { path: '/cursor', message: NUL_MESSAGE },
    ]);
    expect(errorsOf(validateCallbackQuery({ cursor: NUL }))).toEqual([{ path: '/cursor', message: NUL_MESSAGE }]);
  });

  it('stays fast on a 1 MiB string (the patterns are linear)', () => {
    const started = Date.now();
    const long = `${' '.repeat(512 * 1024)}${'x'.repeat(512 * 1024)}\u0000`;
    expect(errorsOf(validateClients([client({ name: long, address: long })])).map((e) => e.path)).toEqual([
      '/0/name',
      '/0/address',
    ]);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('unpaired surrogates (text that is not valid Unicode)', () => {
  const LONE = ['\ud800', 'a\udfff', 'x\ud83d'];
  const SURROGATE_MESSAGE = 'must not contain an unpaired surrogate (\\ud800-\\udfff): not valid Unicode';

  it.each(['name', 'address', 'city', 'complement'])('are refused in a client %s, naming it', (field) => {
    for (const text of LONE)
      expect(errorsOf(validateClients([client({ [field]: text })]))).toEqual([
        { path: `/0/${field}`, message: SURROGATE_MESSAGE },
      ]);
  });

  it('are refused in line descriptions, url_callback, e-mail and cursors; pairs (emoji) are fine', () => {
    const r = validateReceivablesBatch([
      receivable({ items: [{ description: 'Mensalidade \ud800', quantity: 1, price: 10 }] }),
      receivable({ url_callback: 'https://a.example/\udfff' }),
    ]);
    expect(errorsOf(r).map((e) => e.path)).toEqual(['/0/items/0/description', '/1/url_callback']);
    expect(errorsOf(validateClients([client({ email: 'a\ud800@b.example' })])).map((e) => e.path)).toEqual([
      '/0/email',
    ]);
    expect(errorsOf(validateSearchRequest(search({ cursor: 'abc\ud800' }))).map((e) => e.path)).toEqual(['/cursor']);
    expect(validateClients([client({ name: 'Caf\u00e9 \u{1F600}\u{1F1E7}\u{1F1F7}', address: '\u{10FFFF}' })]).ok).toBe(
      true,
    );
  });
});

describe('dates outside 2000-01-01..2099-12-31', () => {
  it.each([
    ['due_date', '0000-01-01'],
    ['due_date', '2100-01-01'],
    ['emission_date', '1999-12-31'],
    ['emission_date', '0001-01-01'],
  ])('are refused in a receivable %s (%s), naming it', (field, date) => {
    const errors = errorsOf(validateReceivablesBatch([receivable(), receivable({ [field]: date })]));
    expect(errors).toContainEqual({ path: `/1/${field}`, message: RANGE_MESSAGE });
    expect(errors.every((e) => e.path.startsWith('/1/'))).toBe(true);
  });

  it('are refused in discount_date', () => {
    const errors = errorsOf(
      validateReceivablesBatch([
        receivable({ discount_type: 'ValorFixoAteDataInformada', discount_value: 1, discount_date: '1999-01-01' }),
      ]),
    );
    expect(errors).toEqual([{ path: '/0/discount_date', message: RANGE_MESSAGE }]);
  });

  it('take the bounds themselves', () => {
    expect(validateReceivablesBatch([receivable({ emission_date: '2000-01-01', due_date: '2099-12-31' })]).ok).toBe(
      true,
    );
    expect(validateSearchRequest(search({ start_date: '2000-01-01', end_date: '2099-12-31' })).ok).toBe(true);
  });

  it('are refused in search start_date and end_date', () => {
    expect(errorsOf(validateSearchRequest(search({ start_date: '0000-01-01', end_date: '9999-12-31' })))).toEqual([
      { path: '/start_date', message: RANGE_MESSAGE },
      { path: '/end_date', message: RANGE_MESSAGE },
    ]);
  });

  it('leave impossible dates in range to the format', () => {
    expect(errorsOf(validateSearchRequest(search({ end_date: '2026-02-30' })))).toEqual([
      { path: '/end_date', message: 'must be a date YYYY-MM-DD' },
    ]);
  });
});

describe('the OpenAPI document says the same', () => {
  const ajv = createAjv();
  ajv.addSchema(JSON.parse(JSON.stringify(buildOpenApiDocument())) as object, 'doc');
  const component = (name: string) => ajv.compile({ $ref: `doc#/components/schemas/${name}` });

  it('refuses U+0000 in a client name and a year-0000 due date through its components', () => {
    const clients = component('ClientsCreateRequest');
    expect(clients([client()])).toBe(true);
    expect(clients([client({ name: NUL })])).toBe(false);
    const receivables = component('ReceivablesCreateRequest');
    expect(receivables([receivable()])).toBe(true);
    expect(receivables([receivable({ due_date: '0000-01-01' })])).toBe(false);
    const searchRequest = component('SearchRequest');
    expect(searchRequest(search({ end_date: '2100-01-01' }))).toBe(false);
  });
});
