import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import type { Violacao } from '../../domain/inter/contract';

// Bodies as sent; queries (all strings on the wire) coerced to the reference's types, with its defaults.
const bodies = addFormats(new Ajv({ allErrors: true, strict: false }));
const queries = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true }));
const compiled = new Map<Ajv, WeakMap<TSchema, ValidateFunction>>();

function validatorFor(ajv: Ajv, schema: TSchema): ValidateFunction {
  let cache = compiled.get(ajv);
  if (!cache) compiled.set(ajv, (cache = new WeakMap()));
  let validate = cache.get(schema);
  if (!validate) cache.set(schema, (validate = ajv.compile(schema)));
  return validate;
}

/** What is wrong with `value` against `schema`, as Inter names it: { propriedade: "pagador.uf", razao }. */
export function violations(schema: TSchema, value: unknown, { query = false } = {}): Violacao[] {
  const validate = validatorFor(query ? queries : bodies, schema);
  if (validate(value)) return [];
  const seen = new Set<string>();
  return (validate.errors ?? [])
    .filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'if')
    .map(toViolacao)
    .filter((v) => {
      const key = `${v.propriedade}:${v.razao}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
}

function toViolacao(error: ErrorObject): Violacao {
  const missing =
    error.keyword === 'required' ? `/${String((error.params as { missingProperty: string }).missingProperty)}` : '';
  const pointer = `${error.instancePath}${missing}`;
  return {
    propriedade: pointer.replace(/^\//, '').replace(/\//g, '.') || 'body',
    razao: error.message ?? error.keyword,
  };
}
