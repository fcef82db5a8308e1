import { Type, type TSchema } from '@sinclair/typebox';

/** Field building blocks shared by the request schemas. Limits come from docs/api.md, "Limits". */
export const MAX_STRING = 255;
export const MAX_BATCH_ITEMS = 1000;

export const Uuid = (description?: string) => Type.String({ format: 'uuid', description });
export const IsoDate = (description?: string) => Type.String({ format: 'date', description });

/** A required text field: at most 255 characters and not blank. */
export const RequiredText = (maxLength = MAX_STRING, description?: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', description });

/** An optional text field: may be absent, null or empty. */
export const OptionalText = (maxLength = MAX_STRING, extra: Record<string, unknown> = {}) =>
  Type.Optional(Type.Union([Type.String({ maxLength, ...extra }), Type.Null()]));

/** A JSON array of 1..1,000 items (more than 1,000 is answered 413 by the gateway before validation). */
export const Batch = <T extends TSchema>(item: T, $id: string) =>
  Type.Array(item, { minItems: 1, maxItems: MAX_BATCH_ITEMS, $id });

/** Reply of every accepted-for-processing endpoint. */
export const StatusMessageSchema = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
});
