import {
  validateBookletRequest,
  validateReceivablesBatch,
  type BookletRequest,
  type FieldError,
  type ReceivableCreateItem,
  type ValidationResult,
} from '@payments/contracts';
import { callbackUrlRefusal, type UrlPolicy } from '@payments/url-safety';

/*
 * Where a url_callback may point: a policy of the running system, applied at the gateway's intake
 * (the contracts hold shapes only). Under `public-only` (production) a literal non-public address or
 * localhost is refused with a 422 before the bus is asked; host names are judged again when
 * callback-svc connects (docs/api.md, Callback URLs). Development allows receivers on 127.0.0.1.
 */

export type { UrlPolicy } from '@payments/url-safety';

export const callbackUrlPolicy = (runMode: 'development' | 'production'): UrlPolicy =>
  runMode === 'development' ? 'allow-private' : 'public-only';

/** The policy's refusal of one url_callback at `path`. Safe on any input: a non-string is the schema's error. */
export function callbackUrlErrors(value: unknown, path: string, policy: UrlPolicy): FieldError[] {
  if (typeof value !== 'string') return [];
  const refusal = callbackUrlRefusal(value, policy);
  return refusal ? [{ path, message: refusal }] : [];
}

function urlCallbackOf(item: unknown): unknown {
  return typeof item === 'object' && item !== null && !Array.isArray(item)
    ? (item as Record<string, unknown>).url_callback
    : undefined;
}

/** A create batch: the contract's validation, each item's url_callback judged with its other rules. */
export function validateCreateBatch(input: unknown, policy: UrlPolicy): ValidationResult<ReceivableCreateItem[]> {
  return validateReceivablesBatch(input, (item, index) =>
    callbackUrlErrors(urlCallbackOf(item), `/${index}/url_callback`, policy),
  );
}

/** A booklet request: the schema, then (when it passes) where its callback may point. */
export function validateBooklet(input: unknown, policy: UrlPolicy): ValidationResult<BookletRequest> {
  const schema = validateBookletRequest(input);
  if (!schema.ok) return schema;
  const errors = callbackUrlErrors(schema.value.url_callback, '/url_callback', policy);
  return errors.length === 0 ? schema : { ok: false, errors };
}
