import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';

// multipleOfPrecision: 0.1 + 0.2 style float noise must not make 19.99 "not a multiple of 0.01".
const ajv = new Ajv({ allErrors: true, strict: false, multipleOfPrecision: 9 });
addFormats(ajv);
const compiled = new WeakMap<TSchema, ValidateFunction>();

function validatorFor(schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** One schema violation: the JSON pointer of the field and what is wrong with it. */
export interface InterViolation {
  path: string;
  message: string;
}

/** The violations of `value` against `schema` (empty when it conforms). */
export function interViolations(schema: TSchema, value: unknown): InterViolation[] {
  const validate = validatorFor(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(toViolation);
}

export function conforms<S extends TSchema>(schema: S, value: unknown): value is Static<S> {
  return validatorFor(schema)(value);
}

export class InterContractError extends Error {
  override readonly name = 'InterContractError';
  constructor(
    readonly what: string,
    readonly violations: InterViolation[],
  ) {
    super(
      `${what} does not match Inter's contract: ${violations.map((v) => `${v.path || '/'} ${v.message}`).join('; ')}`,
    );
  }
}

/** Returns `value` typed by `schema`, or throws InterContractError naming each violation. */
export function assertInter<S extends TSchema>(schema: S, value: unknown, what: string): Static<S> {
  const violations = interViolations(schema, value);
  if (violations.length > 0) throw new InterContractError(what, violations);
  return value as Static<S>;
}

function toViolation(error: ErrorObject): InterViolation {
  const extra =
    error.keyword === 'additionalProperties'
      ? `/${String((error.params as { additionalProperty: string }).additionalProperty)}`
      : error.keyword === 'required'
        ? `/${String((error.params as { missingProperty: string }).missingProperty)}`
        : '';
  return { path: `${error.instancePath}${extra}`, message: error.message ?? error.keyword };
}
