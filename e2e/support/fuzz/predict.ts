import {
  CALLBACK_REPLAY_MAX_DAYS,
  CallbackListQuerySchema,
  CallbackReplayRequestSchema,
  ClientsCreateRequestSchema,
  ClientUpdateRequestSchema,
  compileValidator,
  EVENT_ID_PATTERN,
  validateBookletRequest,
  validateReceivablesBatch,
  validateSearchRequest,
  type ValidationResult,
} from '@payments/contracts';
import type { FuzzCase } from './cases';
import { decodedSegment, readBody, UUID } from './request-body';

/**
 * Whether the gateway should refuse a request before any service acts on it: an independent
 * reading of its rules (docs/api.md, Validation and Limits; docs/architecture.md) with the contracts' own
 * validators. The fuzz test sends every request this refuses as the tenant that never makes a valid
 * request, so that tenant must end with no rows; the others go to the tenant with real data (where
 * they may still be refused: an unknown id, a cancelled charge).
 *
 * Returns the reason for refusal, or undefined when the request passes the gateway's checks.
 */
export function gatewayRefusal(c: FuzzCase): string | undefined {
  // Downloads take no credential (the signed link is one): whatever Authorization says is ignored.
  const download = ['downloadBooklet', 'downloadSlipPdf', 'downloadSlipQrCode'].includes(c.operationId);
  if (!download && c.auth !== 'tenant') return 'credential';
  const [path, query = ''] = c.url.split('?', 2);
  const body = parsedBody(c);
  if (typeof body === 'string') return body;
  const key = c.headers['idempotency-key'];
  const policy = IDEMPOTENCY[c.operationId];
  // Reads (policy none) ignore the header, whatever it holds.
  if (policy !== undefined && policy !== 'none') {
    if (key === undefined || key === '') {
      if (policy === 'required') return 'idempotency-key missing';
    } else if (!/^[\x21-\x7e]{1,255}$/.test(key)) return 'idempotency-key invalid';
  }
  return operationRefusal(c.operationId, decodePathParams(path), new URLSearchParams(query), body);
}

const IDEMPOTENCY: Record<string, 'required' | 'optional' | 'none'> = {
  createClients: 'required',
  updateClient: 'required',
  createReceivables: 'required',
  cancelReceivable: 'required',
  requestBooklet: 'required',
  searchReceivables: 'none',
  consultReceivable: 'none',
  retryCallback: 'optional',
  replayCallbacks: 'optional',
  listCallbacks: 'none',
  getCallback: 'none',
};

/** The body as the gateway reads it, or why it refuses it (the mounted endpoints only read one). */
function parsedBody(c: FuzzCase): unknown {
  return c.operationId in IDEMPOTENCY ? readBody(c) : {};
}

const EVENT_ID = new RegExp(EVENT_ID_PATTERN);
const validateClients = compileValidator(ClientsCreateRequestSchema);
const validateUpdate = compileValidator(ClientUpdateRequestSchema);
const validateCallbackQuery = compileValidator(CallbackListQuerySchema);
const validateReplay = compileValidator(CallbackReplayRequestSchema);

/** A replay's span: since neither in the future nor over CALLBACK_REPLAY_MAX_DAYS back, until after it. */
function replaySpanRefusal(body: unknown): string | undefined {
  const { since, until } = body as { since: string; until?: string };
  const from = Date.parse(since);
  // A margin either side: the gateway's clock moves on between the judgement and the request.
  if (from > Date.now() - 60_000 || from < Date.now() - CALLBACK_REPLAY_MAX_DAYS * 86_400_000 + 60_000)
    return 'since out of range';
  if (until !== undefined && Date.parse(until) <= from) return 'until not after since';
  return undefined;
}

/** Path segments after the fixed prefix, decoded as the router decodes them (undecodable: kept). */
function decodePathParams(path: string): string[] {
  return path.split('/').map(decodedSegment);
}

/**
 * The search's optional filters read from docs/api.md ("Search") rather than from the contracts'
 * schema: the fuzz test holds the gateway to these, so a filter the docs refuse is never searched.
 */
export function searchFilterRefusal(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if ('payer_name' in b && !isSearchText(b.payer_name, 3, 100)) return 'body: /payer_name';
  if ('payer_tax_id' in b && !isTaxId(b.payer_tax_id)) return 'body: /payer_tax_id';
  if ('our_number' in b && !(typeof b.our_number === 'string' && /^[0-9A-Za-z./-]{1,40}$/.test(b.our_number)))
    return 'body: /our_number';
  if ('value' in b && !isSearchAmount(b.value)) return 'body: /value';
  return undefined;
}

/** With the `u` flag a range of surrogates matches only one standing alone (a pair is one code point). */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/** Text of min..max characters (code points), not blank, without U+0000 or an unpaired surrogate. */
function isSearchText(value: unknown, min: number, max: number): boolean {
  if (typeof value !== 'string') return false;
  const length = Array.from(value).length;
  return (
    length >= min && length <= max && /\S/u.test(value) && !value.includes('\u0000') && !LONE_SURROGATE.test(value)
  );
}

/**
 * A CPF (11 digits) or CNPJ (12 digits or capital letters, then 2 digits), bare or in the official
 * punctuation, whose check digits hold: each is 11 minus the weighted sum mod 11 (0 when that is 10
 * or 11), a character counting as its code minus 48. Ids of one repeated digit are not issued.
 */
function isTaxId(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (/^\d{3}\.?\d{3}\.?\d{3}-?\d{2}$/.test(value)) return checkDigitsHold(value.replace(/\D/g, ''), 9, 10);
  if (/^[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}\/?[0-9A-Z]{4}-?\d{2}$/i.test(value))
    return checkDigitsHold(value.replace(/[./-]/g, '').toUpperCase(), 12, 5);
  return false;
}

/** The last two characters of `id` are the check digits of its first `base`; weights start at `top` and wrap after 2 to 9. */
function checkDigitsHold(id: string, base: number, top: number): boolean {
  if (/^(\d)\1*$/.test(id)) return false;
  const values = Array.from(id, (ch) => ch.charCodeAt(0) - 48);
  for (let n = base; n < base + 2; n++) {
    let sum = 0;
    let weight = top + (n - base);
    for (let i = 0; i < n; i++) {
      sum += (values[i] ?? 0) * weight;
      weight = weight === 2 ? 9 : weight - 1;
    }
    const digit = 11 - (sum % 11);
    if ((digit >= 10 ? 0 : digit) !== values[n]) return false;
  }
  return true;
}

/** Reais above 0, at most 9,999,999,999.99, written with at most 2 decimals. */
function isSearchAmount(value: unknown): boolean {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value > 0 &&
    value <= 9_999_999_999.99 &&
    Number(value.toFixed(2)) === value
  );
}

const refusedBy = (result: ValidationResult<unknown>, what: string) =>
  result.ok ? undefined : `${what}: ${result.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`;

function operationRefusal(
  operationId: string,
  segments: string[],
  query: URLSearchParams,
  body: unknown,
): string | undefined {
  // /api/v1/<resource>/<param>/...: segments[4] is the first parameter.
  const param = segments[4] ?? '';
  const copy = () => structuredClone(body);
  switch (operationId) {
    case 'createClients':
      return Array.isArray(body) && body.length > 1000 ? 'too many items' : refusedBy(validateClients(copy()), 'body');
    case 'updateClient':
      return UUID.test(param) ? refusedBy(validateUpdate(copy()), 'body') : 'path uuid';
    case 'createReceivables':
      return Array.isArray(body) && body.length > 1000
        ? 'too many items'
        : refusedBy(validateReceivablesBatch(copy()), 'body');
    case 'searchReceivables':
      return refusedBy(validateSearchRequest(copy()), 'body') ?? searchFilterRefusal(body);
    case 'cancelReceivable':
    case 'consultReceivable':
    case 'receivableHistory':
    case 'receivablePaymentData':
    case 'getReceivable':
      return UUID.test(param) ? undefined : 'path uuid';
    case 'requestBooklet':
      return UUID.test(param) ? refusedBy(validateBookletRequest(copy()), 'body') : 'path uuid';
    case 'getCallback':
    case 'retryCallback':
      return EVENT_ID.test(segments[4] ?? '') ? undefined : 'event id';
    case 'replayCallbacks':
      return refusedBy(validateReplay(copy()), 'body') ?? replaySpanRefusal(body);
    case 'listCallbacks': {
      const raw: Record<string, unknown> = {};
      for (const k of new Set(query.keys())) {
        const all = query.getAll(k);
        raw[k] = all.length > 1 ? all : all[0];
      }
      if (typeof raw.limit === 'string' && /^\d+$/.test(raw.limit)) raw.limit = Number(raw.limit);
      return refusedBy(validateCallbackQuery(raw), 'query');
    }
    default:
      // authenticate, refresh, downloads: judged by their credential or link, nothing to store.
      return undefined;
  }
}
