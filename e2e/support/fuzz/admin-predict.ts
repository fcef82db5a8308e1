import { gunzipSync, inflateSync } from 'node:zlib';
import {
  ADMIN_MAX_PAGE,
  ADMIN_OPERATIONS,
  compileValidator,
  STATS_WINDOW_NAMES,
  type FieldError,
  type Validator,
} from '@payments/contracts';
import type { AdminCase } from './admin-cases';

/**
 * Whether the gateway must refuse an admin request before it changes anything: an independent reading
 * of the admin API's rules (its OpenAPI document, docs/api.md) with the contracts' validators. The
 * fuzz test fails on a 2xx for such a request; the field errors the contracts give are those the
 * answer must name.
 */
export interface AdminRefusal {
  reason: string;
  /** Where the refused field is: the problem's errors[].path must name one of these. */
  fields: string[];
}

export function adminRefusal(c: AdminCase): AdminRefusal | undefined {
  if (c.auth !== 'operator') return { reason: 'credential', fields: [] };
  const operation = ADMIN_OPERATIONS.find((o) => o.operationId === c.operationId)!;
  const [path, query = ''] = c.url.split('?', 2);
  const body = parsedBody(c);
  if (typeof body === 'string') return { reason: body, fields: [] };
  return (
    pathRefusal(operation.path, path) ??
    queryRefusal(c.operationId, new URLSearchParams(query)) ??
    bodyRefusal(c.operationId, body)
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEAD_LETTER_ID = /^[1-9]\d{0,15}$/;
const BODY_LIMIT = 1024 * 1024;
const MAX_DEPTH = 32;

/** The body as the gateway's JSON reader reads it (every admin route reads one), or why it refuses it. */
function parsedBody(c: AdminCase): unknown {
  const raw =
    c.body === undefined
      ? undefined
      : 'text' in c.body
        ? Buffer.from(c.body.text)
        : Buffer.from(c.body.base64, 'base64');
  if (raw === undefined || raw.length === 0) return {};
  if (raw.length > BODY_LIMIT) return 'too large';
  const [media, ...params] = (c.headers['content-type'] ?? '')
    .toLowerCase()
    .split(';')
    .map((s) => s.trim());
  if (media !== 'application/json' && !/^application\/[^/]*\+json$/.test(media)) return 'content-type';
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') return 'charset';
  let bytes: Buffer;
  try {
    const coding = (c.headers['content-encoding'] ?? '').toLowerCase();
    if (coding === 'gzip') bytes = gunzipSync(raw);
    else if (coding === 'deflate') bytes = inflateSync(raw);
    else if (coding === '' || coding === 'identity') bytes = raw;
    else return 'content-encoding';
  } catch {
    return 'bad gzip';
  }
  if (bytes.length > BODY_LIMIT) return 'too large';
  if (maxDepth(bytes) > MAX_DEPTH) return 'too deep';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'not UTF-8';
  }
  if (text.trim() === '') return {};
  if (!/^[ \t\n\r]*[[{]/.test(text)) return 'not an object or array';
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return 'malformed JSON';
  }
}

/** Deepest nesting of arrays and objects, strings skipped. */
function maxDepth(bytes: Buffer): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i += 1) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i += 1;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) max = Math.max(max, ++depth);
    else if (b === 0x5d || b === 0x7d) depth -= 1;
  }
  return max;
}

/** Each {parameter} of the template against its segment, decoded as the router decodes it. */
function pathRefusal(template: string, path: string): AdminRefusal | undefined {
  const names = template.split('/');
  const values = path.split('/');
  for (let i = 0; i < names.length; i += 1) {
    const name = /^\{(.+)\}$/.exec(names[i])?.[1];
    if (!name) continue;
    const value = decoded(values[i] ?? '');
    const fits = name === 'dead_letter_id' ? DEAD_LETTER_ID.test(value) : UUID.test(value);
    if (!fits) return { reason: `path ${name}`, fields: [name] };
  }
  return undefined;
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** What each operation reads from the query string, and what each parameter must be. */
const QUERY_RULES: Record<string, Record<string, (v: string) => boolean>> = {
  adminListDeadLetters: { limit: isLimit },
  adminListAudit: { tenant_id: (v) => UUID.test(v), cursor: (v) => /^[1-9]\d{0,17}$/.test(v), limit: isLimit },
  adminRegistrationStats: { window: isWindow, tenant_id: (v) => UUID.test(v) },
  adminDeliveryStats: { window: isWindow, tenant_id: (v) => UUID.test(v) },
  adminDeliveryHealth: { window: isWindow, tenant_id: (v) => UUID.test(v) },
};

function isLimit(v: string): boolean {
  return /^[1-9]\d{0,5}$/.test(v) && Number(v) <= ADMIN_MAX_PAGE;
}

function isWindow(v: string): boolean {
  return (STATS_WINDOW_NAMES as string[]).includes(v);
}

function queryRefusal(operationId: string, query: URLSearchParams): AdminRefusal | undefined {
  const rules = QUERY_RULES[operationId] ?? {};
  const fields = Object.entries(rules)
    .filter(([name, fits]) => {
      const all = query.getAll(name);
      return all.length > 1 || (all.length === 1 && !fits(all[0]));
    })
    .map(([name]) => name);
  return fields.length > 0 ? { reason: `query ${fields.join(', ')}`, fields } : undefined;
}

const VALIDATORS: Record<string, Validator<unknown>> = Object.fromEntries(
  ADMIN_OPERATIONS.filter((o) => o.requestBody).map((o) => [o.operationId, compileValidator(o.requestBody!)]),
);

function bodyRefusal(operationId: string, body: unknown): AdminRefusal | undefined {
  const validate = VALIDATORS[operationId];
  if (!validate) return undefined;
  // The validator strips unknown fields in place: the case's own body stays as it was.
  const result = validate(structuredClone(body));
  if (result.ok) return undefined;
  return { reason: `body: ${describe(result.errors)}`, fields: result.errors.map((e) => e.path) };
}

function describe(errors: FieldError[]): string {
  return errors.map((e) => `${e.path} ${e.message}`).join('; ');
}
