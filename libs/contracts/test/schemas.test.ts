import type { TSchema } from '@sinclair/typebox';
import * as contracts from '../src';

const schemas = Object.entries(contracts).filter(
  ([name, v]) => name.endsWith('Schema') && typeof v === 'object' && v !== null,
) as Array<[string, TSchema]>;
const withId = schemas.filter(([, s]) => typeof s.$id === 'string');

describe('schema registry', () => {
  it('every top-level request/response schema has a unique $id', () => {
    expect(schemas.length).toBeGreaterThan(20);
    const ids = withId.map(([, s]) => s.$id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const name of [
      'ReceivablesCreateRequest',
      'ReceivableCreateItem',
      'ReceivablesCreateResponse',
      'CancelResponse',
      'SearchRequest',
      'SearchResultItem',
      'SearchResponse',
      'ConsultResult',
      'BookletRequest',
      'BookletResponse',
    ]) {
      expect(ids).toContain(name);
    }
  });

  it.each([
    ['declaration order', withId],
    ['reverse order', [...withId].reverse()],
  ])('all compile on one ajv instance in %s', (_label, list) => {
    const ajv = contracts.createAjv();
    for (const [, s] of list) expect(() => contracts.compileValidator(s, ajv)).not.toThrow();
  });

  it('an item schema compiled after its batch schema validates on its own', () => {
    const ajv = contracts.createAjv();
    contracts.compileValidator(contracts.ClientsCreateRequestSchema, ajv);
    const item = contracts.compileValidator(contracts.ClientCreateItemSchema, ajv);
    expect(
      item({ client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60', name: 'x', cnpj_cpf: '529.982.247-25', extra: 1 }),
    ).toEqual({
      ok: true,
      value: { client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60', name: 'x', cnpj_cpf: '529.982.247-25' },
    });
    expect(item({ name: 'x', cnpj_cpf: '529.982.247-25' })).toEqual({
      ok: false,
      errors: [{ path: '/client_id', message: 'is required' }],
    });
  });
});
