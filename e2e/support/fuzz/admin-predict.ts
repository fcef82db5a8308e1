import {
  ADMIN_MAX_PAGE,
  ADMIN_OPERATIONS,
  compileValidator,
  STATS_WINDOW_NAMES,
  type FieldError,
  type Validator,
} from '@payments/contracts';
import type { AdminCase } from './admin-cases';
import { decodedSegment, readBody, UUID } from './request-body';

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
  const body = readBody(c);
  if (typeof body === 'string') return { reason: body, fields: [] };
  return (
    pathRefusal(operation.path, path) ??
    queryRefusal(c.operationId, new URLSearchParams(query)) ??
    bodyRefusal(c.operationId, body)
  );
}

const DEAD_LETTER_ID = /^[1-9]\d{0,15}$/;

/** Each {parameter} of the template against its segment, decoded as the router decodes it. */
function pathRefusal(template: string, path: string): AdminRefusal | undefined {
  const names = template.split('/');
  const values = path.split('/');
  for (let i = 0; i < names.length; i += 1) {
    const name = /^\{(.+)\}$/.exec(names[i])?.[1];
    if (!name) continue;
    const value = decodedSegment(values[i] ?? '');
    const fits = name === 'dead_letter_id' ? DEAD_LETTER_ID.test(value) : UUID.test(value);
    if (!fits) return { reason: `path ${name}`, fields: [name] };
  }
  return undefined;
}

/** What each operation reads from the query string, and what each parameter must be. */
const QUERY_RULES: Record<string, Record<string, (v: string) => boolean>> = {
  adminListDeadLetters: { cursor: (v) => /^[1-9]\d{0,17}$/.test(v), limit: isLimit },
  adminListAudit: {
    tenant_id: (v) => UUID.test(v),
    action: (v) => /^[a-z][a-z.-]{0,63}$/.test(v),
    // eslint-disable-next-line no-control-regex
    operator: (v) => v.trim() !== '' && v.trim().length <= 200 && !/[\u0000-\u001f\u007f]/.test(v.trim()),
    since: (v) => isoTime(v) !== undefined,
    until: (v) => isoTime(v) !== undefined,
    cursor: (v) => /^[1-9]\d{0,17}$/.test(v),
    limit: isLimit,
  },
  adminRegistrationStats: { window: isWindow, tenant_id: (v) => UUID.test(v) },
  adminDeliveryStats: { window: isWindow, tenant_id: (v) => UUID.test(v) },
  adminDeliveryHealth: { window: isWindow, tenant_id: (v) => UUID.test(v) },
};

function isLimit(v: string): boolean {
  return /^[1-9]\d{0,5}$/.test(v) && Number(v) <= ADMIN_MAX_PAGE;
}

/** docs/api.md: an ISO 8601 date-time with its zone (Z or an offset). */
function isoTime(v: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : at;
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
  // The audit's window: until must come after since.
  const [since, until] = [isoTime(query.get('since') ?? ''), isoTime(query.get('until') ?? '')];
  if (operationId === 'adminListAudit' && fields.length === 0 && since !== undefined && until !== undefined)
    if (since >= until) fields.push('until');
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
