import pino from 'pino';
import { redactValue } from '@payments/telemetry';

/**
 * Fields of a Postgres error (pg's DatabaseError) that carry row data or SQL: `detail` is e.g.
 * `Key (cnpj_cpf)=(529.982.247-25) already exists.`, `where` and `internalQuery` quote statements
 * with their values. The rest (code, severity, constraint, table, column, routine) stays: it says
 * what failed without saying whose data.
 */
const ROW_DATA_FIELDS = new Set(['detail', 'where', 'internalQuery', 'hint', 'parameters', 'values']);

/** SQLSTATE class 22 (data exception): the message quotes the offending value, e.g. `invalid input syntax for type uuid: "..."`. */
const QUOTES_VALUE = /^22[0-9A-Z]{3}$/;
const QUOTED = /"(?:[^"\\]|\\.)*"/g;

type Serialized = Record<string, unknown>;

/**
 * pino's error serializer (message, stack, type, own fields, causes), less the fields of a Postgres
 * error that hold row data, at every depth (causes, AggregateError's errors); the quoted value in a
 * data exception's message is masked, and messages lose URL query strings and punctuated CPF/CNPJ
 * (redactValue, as spans do).
 */
export function serializeError(value: unknown): unknown {
  if (!(value instanceof Error) && (typeof value !== 'object' || value === null)) return value;
  const serialized = pino.stdSerializers.err(value as Error) as unknown;
  return scrub(serialized, new WeakSet());
}

function scrub(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => scrub(item, seen));
  const result: Serialized = {};
  for (const [key, field] of Object.entries(value as Serialized)) {
    if (ROW_DATA_FIELDS.has(key)) continue;
    result[key] = scrub(field, seen);
  }
  const quotesValue = typeof result.code === 'string' && QUOTES_VALUE.test(result.code);
  for (const key of ['message', 'stack'] as const) {
    const text = result[key];
    if (typeof text !== 'string') continue;
    // An HTTP client's error names the URL it called, query (a signed link, an ERP's key) included.
    const redacted = redactValue(text);
    result[key] = quotesValue ? redacted.replace(QUOTED, '"[value]"') : redacted;
  }
  return result;
}
