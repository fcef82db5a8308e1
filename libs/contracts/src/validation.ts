import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import { isValidTaxId } from '@payments/tax-id';
import { DATE_RANGE_PATTERN, MAX_DATE, MIN_DATE, NOT_BLANK_TEXT_PATTERN } from './common';
import type { FieldError } from './errors';

/**
 * One ajv instance configured the way every consumer of the contracts must validate:
 * all errors reported, unknown properties removed (docs/api.md, Validation: unknown fields are ignored), no coercion.
 */
export function createAjv(): Ajv {
  // verbose: errors carry parentSchema, so pattern errors can quote the field's description (see describe()).
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    removeAdditional: 'all',
    coerceTypes: false,
    useDefaults: true,
    strict: false,
  });
  addFormats(ajv, ['uuid', 'date', 'date-time', 'email', 'uri']);
  ajv.addFormat('cpf-cnpj', { type: 'string', validate: isValidTaxId });
  const emailFormat = ajv.formats['email'];
  const isEmail = (v: string) =>
    emailFormat instanceof RegExp ? emailFormat.test(v) : typeof emailFormat === 'function' ? emailFormat(v) : true;
  ajv.addFormat('email-or-empty', { type: 'string', validate: (v: string) => v === '' || isEmail(v) });
  // A link that may be absent: a slip issued without PIX has no QR code image.
  const uriFormat = ajv.formats['uri'];
  const isUri = (v: string) =>
    uriFormat instanceof RegExp ? uriFormat.test(v) : typeof uriFormat === 'function' ? uriFormat(v) : true;
  ajv.addFormat('uri-or-empty', { type: 'string', validate: (v: string) => v === '' || isUri(v) });
  return ajv;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };
export type Validator<T> = (input: unknown) => ValidationResult<T>;

const FORMAT_MESSAGES: Record<string, string> = {
  'cpf-cnpj': 'must be a valid CPF or CNPJ (check digits)',
  'email-or-empty': 'must be a valid e-mail address',
  uuid: 'must be a UUID',
  date: 'must be a date YYYY-MM-DD',
};

/** With the `u` flag a lone surrogate is a code point of its own; a pair is one astral code point. */
const UNPAIRED_SURROGATE = /[\ud800-\udfff]/u;

function describe(error: ErrorObject): FieldError {
  const base = error.instancePath;
  switch (error.keyword) {
    case 'required':
      return { path: `${base}/${error.params.missingProperty}`, message: 'is required' };
    case 'format':
      return {
        path: base,
        message: FORMAT_MESSAGES[error.params.format] ?? `must match format ${error.params.format}`,
      };
    case 'pattern':
      if (typeof error.data === 'string' && error.data.includes('\u0000'))
        return { path: base, message: 'must not contain U+0000 (NUL)' };
      if (typeof error.data === 'string' && UNPAIRED_SURROGATE.test(error.data))
        return { path: base, message: 'must not contain an unpaired surrogate (\\ud800-\\udfff): not valid Unicode' };
      if (error.params.pattern === NOT_BLANK_TEXT_PATTERN) return { path: base, message: 'must not be blank' };
      if (error.params.pattern === DATE_RANGE_PATTERN)
        return { path: base, message: `must be a date YYYY-MM-DD from ${MIN_DATE} to ${MAX_DATE}` };
      return {
        path: base,
        message: error.parentSchema?.description
          ? `invalid: ${error.parentSchema.description}`
          : `must match ${error.params.pattern}`,
      };
    default:
      return { path: base, message: error.message ?? 'is invalid' };
  }
}

/** Collapses ajv's union noise (one error per branch) into one message per path. */
export function toFieldErrors(errors: ErrorObject[]): FieldError[] {
  const byPath = new Map<string, FieldError>();
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const error of errors) {
    if (error.keyword === 'anyOf') continue;
    const field = describe(error);
    const isUnionBranch = unionPaths.has(error.instancePath) && (error.keyword === 'type' || error.keyword === 'const');
    if (isUnionBranch) {
      const allowed = errors
        .filter((e) => e.instancePath === error.instancePath && e.keyword === 'const')
        .map((e) => JSON.stringify(e.params.allowedValue));
      const message = allowed.length > 0 ? `must be one of ${allowed.join(', ')}` : 'has the wrong type';
      if (!byPath.has(field.path)) byPath.set(field.path, { path: field.path, message });
      continue;
    }
    if (!byPath.has(field.path)) byPath.set(field.path, field);
  }
  return [...byPath.values()];
}

const shared = createAjv();

/** Compiles a schema once; the validator strips unknown fields in place and returns typed data. */
export function compileValidator<S extends TSchema>(schema: S, ajv: Ajv = shared): Validator<Static<S>> {
  const validate: ValidateFunction = registeredValidator(ajv, schema) ?? ajv.compile(schema);
  return (input: unknown) =>
    validate(input)
      ? { ok: true, value: input as Static<S> }
      : { ok: false, errors: toFieldErrors(validate.errors ?? []) };
}

/**
 * A schema whose $id the instance already knows (e.g. an item schema embedded in a batch schema compiled
 * earlier) is reused: compiling it again would throw "schema with key or id ... already exists".
 */
function registeredValidator(ajv: Ajv, schema: TSchema): ValidateFunction | undefined {
  if (typeof schema.$id !== 'string') return undefined;
  const existing = ajv.getSchema(schema.$id);
  if (existing && JSON.stringify(existing.schema) !== JSON.stringify(schema)) {
    throw new Error(`another schema with $id ${schema.$id} is already registered`);
  }
  return existing;
}
