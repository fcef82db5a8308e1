import { Type, type TSchema } from '@sinclair/typebox';

/** Field building blocks shared by the request schemas. Limits come from docs/api.md, "Limits". */
export const MAX_STRING = 255;
export const MAX_BATCH_ITEMS = 1000;

/**
 * Text is well-formed and never holds U+0000 (Bad input): Postgres stores neither U+0000
 * nor, in jsonb, an unpaired UTF-16 surrogate, so both are refused at the gateway rather than failing
 * in a service. Every free-text field carries one of these patterns (fields with a format or a
 * pattern of their own already exclude both). They are read with the `u` flag (ajv's default), where
 * [\ud800-\udfff] matches only an unpaired surrogate. Both are linear: they must stay cheap on a
 * 1 MiB string, since ajv runs them whatever the length.
 */
export const TEXT_PATTERN = '^[^\\u0000\\ud800-\\udfff]*$';
/** Not blank (a non-space character somewhere), no U+0000, no unpaired surrogate. */
export const NOT_BLANK_TEXT_PATTERN = '^\\s*[^\\s\\u0000\\ud800-\\udfff][^\\u0000\\ud800-\\udfff]*$';

/** Dates are within 2000-01-01..2099-12-31: a year 20xx, on top of format `date`. */
export const MIN_DATE = '2000-01-01';
export const MAX_DATE = '2099-12-31';
export const DATE_RANGE_PATTERN = '^20\\d{2}-\\d{2}-\\d{2}$';

export const Uuid = (description?: string) => Type.String({ format: 'uuid', description });

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its usual text form, either case: what `Uuid()` accepts, for ids read outside a schema. */
export function isUuid(text: string): boolean {
  return UUID_TEXT.test(text);
}
export const IsoDate = (description?: string) =>
  Type.String({
    format: 'date',
    pattern: DATE_RANGE_PATTERN,
    description: `${description ? `${description}; ` : ''}YYYY-MM-DD from ${MIN_DATE} to ${MAX_DATE}`,
  });

/** A required text field: at most 255 characters, not blank, well-formed, no U+0000. */
export const RequiredText = (maxLength = MAX_STRING, description?: string) =>
  Type.String({ minLength: 1, maxLength, pattern: NOT_BLANK_TEXT_PATTERN, description });

/** An optional text field: may be absent, null or empty; well-formed and without U+0000 (`extra` may set a stricter pattern). */
export const OptionalText = (maxLength = MAX_STRING, extra: Record<string, unknown> = {}) =>
  Type.Optional(Type.Union([Type.String({ maxLength, pattern: TEXT_PATTERN, ...extra }), Type.Null()]));

/** An opaque string handed out by the API (a page cursor): at most `maxLength` characters, well-formed, no U+0000. */
export const OpaqueToken = (maxLength: number, description?: string) =>
  Type.String({ maxLength, pattern: TEXT_PATTERN, description });

/** A JSON array of 1..1,000 items (more than 1,000 is answered 413 by the gateway before validation). */
export const Batch = <T extends TSchema>(item: T, $id: string) =>
  Type.Array(item, { minItems: 1, maxItems: MAX_BATCH_ITEMS, $id });

/** Reply of every accepted-for-processing endpoint. */
export const StatusMessageSchema = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
});
