import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { standardSchemas } from './schemas';

// The schemas are JSON Schemas generated from the standard's document (scripts/generate.ts); they never
// forbid additional properties, as the standard lets a PSP add fields.
// multipleOfPrecision: float noise must not make 19.99 "not a multiple of 0.01".
const ajv = new Ajv({ allErrors: true, strict: false, multipleOfPrecision: 9 });
addFormats(ajv);
const compiled = new Map<string, ValidateFunction>();

/** One schema violation: the JSON pointer of the field and what is wrong with it. */
export interface PixViolation {
  path: string;
  message: string;
}

/** The names of the standard's schemas (its components.schemas), e.g. 'CobVSolicitada'. */
export function standardSchemaNames(): string[] {
  return Object.keys(standardSchemas);
}

/** The violations of `value` against the standard's schema `schemaName` (empty when it conforms). */
export function standardViolations(schemaName: string, value: unknown): PixViolation[] {
  const validate = validatorFor(schemaName);
  if (validate(value)) return [];
  return dedupe((validate.errors ?? []).map(toViolation));
}

function validatorFor(schemaName: string): ValidateFunction {
  let validate = compiled.get(schemaName);
  if (!validate) {
    const schema = standardSchemas[schemaName];
    if (!schema) throw new TypeError(`the PIX standard has no schema named ${schemaName}`);
    validate = ajv.compile(schema);
    compiled.set(schemaName, validate);
  }
  return validate;
}

function toViolation(error: ErrorObject): PixViolation {
  const extra =
    error.keyword === 'required' ? `/${String((error.params as { missingProperty: string }).missingProperty)}` : '';
  return { path: `${error.instancePath}${extra}`, message: error.message ?? error.keyword };
}

function dedupe(violations: PixViolation[]): PixViolation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = `${v.path} ${v.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
