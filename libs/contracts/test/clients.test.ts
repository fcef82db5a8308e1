import { ClientsCreateRequestSchema, compileValidator } from '../src';

const validate = compileValidator(ClientsCreateRequestSchema);
const client = (over: Record<string, unknown> = {}) => ({
  client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60',
  name: 'ACME Ltda',
  cnpj_cpf: '11.222.333/0001-81',
  address: 'Av. Paulista',
  number: '1000',
  neighborhood: 'Bela Vista',
  city: 'Sao Paulo',
  state: 'SP',
  zip_code: '01310-100',
  telephone: '1133334444',
  phone_number: '11999998888',
  email: 'financeiro@acme.example.com',
  return_client_data: true,
  ...over,
});
const errorsOf = (input: unknown) => {
  const r = validate(input);
  return r.ok ? [] : r.errors;
};

describe('clients create', () => {
  it('accepts a valid client, with a CPF too', () => {
    expect(validate([client()]).ok).toBe(true);
    expect(validate([client({ cnpj_cpf: '529.982.247-25' }), client({ cnpj_cpf: '52998224725' })]).ok).toBe(true);
  });

  it('reports a bad CPF at /0/cnpj_cpf', () => {
    expect(errorsOf([client({ cnpj_cpf: '529.982.247-24' })])).toEqual([
      { path: '/0/cnpj_cpf', message: 'must be a valid CPF or CNPJ (check digits)' },
    ]);
  });

  it('accepts the alphanumeric CNPJ', () => {
    expect(validate([client({ cnpj_cpf: '12.ABC.345/01DE-35' })]).ok).toBe(true);
    expect(errorsOf([client({ cnpj_cpf: '12.ABC.345/01DE-36' })]).map((e) => e.path)).toEqual(['/0/cnpj_cpf']);
  });

  it("rejects state 'XX' and accepts null", () => {
    const errors = errorsOf([client({ state: 'XX' })]);
    expect(errors).toEqual([{ path: '/0/state', message: expect.stringContaining('must be one of') }]);
    expect(errors[0].message).toContain('"SP"');
    expect(validate([client({ state: null })]).ok).toBe(true);
  });

  it("rejects email 'nope' but accepts ''", () => {
    expect(errorsOf([client({ email: 'nope' })])).toEqual([
      { path: '/0/email', message: 'must be a valid e-mail address' },
    ]);
    expect(validate([client({ email: '' })]).ok).toBe(true);
  });

  it('reports a missing name, and a blank one', () => {
    const { name: _omit, ...noName } = client();
    expect(errorsOf([client(), noName])).toEqual([{ path: '/1/name', message: 'is required' }]);
    expect(errorsOf([client({ name: '   ' })])).toEqual([{ path: '/0/name', message: 'must not be blank' }]);
  });
});
