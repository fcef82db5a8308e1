import type { ErrorCode, FieldError } from './errors';

/** Reply envelope of every request-reply exchange on the bus. */
export type BusReply<T> =
  { ok: true; data: T } | { ok: false; error: { code: ErrorCode; detail: string; errors?: FieldError[] } };
