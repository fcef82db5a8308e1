import {
  ADMIN_MAX_PAGE,
  AdminProviderAccountRequestSchema,
  AdminRotateSecretRequestSchema,
  AdminTenantCreateRequestSchema,
  compileValidator,
  type FieldError,
  isUuid,
  type Validator,
} from '@payments/contracts';
import type { GatewayContext } from '../context';
import { requestBody } from '../json-body';
import { validationError } from '../problem';
import type { AuditFilter } from '../../../domain/tenancy/admin-audit';

export const TENANT_CREATE = compileValidator(AdminTenantCreateRequestSchema);
export const PROVIDER_ACCOUNT = compileValidator(AdminProviderAccountRequestSchema);
export const ROTATE_SECRET = compileValidator(AdminRotateSecretRequestSchema);

/** The JSON body checked against its contract schema; every bad field is named, and nothing is done. */
export function validBody<T>(ctx: GatewayContext, validate: Validator<T>): T {
  const result = validate(requestBody(ctx));
  if (!result.ok) throw validationError(result.errors);
  return result.value;
}

function queryText(ctx: GatewayContext, name: string): string | undefined {
  const value = ctx.query[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw validationError([{ in: 'query', path: name, message: 'may be given once' }]);
  return value;
}

/** :dead_letter_id, a positive integer (the dead letter's sequence in its stream). */
export function deadLetterParam(ctx: GatewayContext): number {
  const id = ctx.params.dead_letter_id ?? '';
  if (!/^[1-9]\d{0,15}$/.test(id))
    throw validationError([{ in: 'path', path: 'dead_letter_id', message: 'must be a dead letter id (1, 2, ...)' }]);
  return Number(id);
}

/** ?cursor: the next_cursor of an earlier page (an id). */
export function cursorParam(ctx: GatewayContext, errors: FieldError[]): number | undefined {
  const cursor = queryText(ctx, 'cursor');
  if (cursor === undefined) return undefined;
  if (/^[1-9]\d{0,17}$/.test(cursor)) return Number(cursor);
  errors.push({ in: 'query', path: 'cursor', message: 'must be the next_cursor of an earlier page' });
  return undefined;
}

const AUDIT_ACTION = /^[a-z][a-z.-]{0,63}$/;
const AUDIT_OPERATOR_MAX = 200;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The audit's filters (?tenant_id, action, operator, since, until), each bad one named. */
export function auditFilter(ctx: GatewayContext, errors: FieldError[]): AuditFilter {
  const fail = (path: string, message: string) => {
    errors.push({ in: 'query', path, message });
    return undefined;
  };
  const tenantId = queryText(ctx, 'tenant_id');
  const action = queryText(ctx, 'action');
  const operator = queryText(ctx, 'operator')?.trim();
  const time = (name: 'since' | 'until') => {
    const text = queryText(ctx, name);
    if (text === undefined) return undefined;
    const at = isoTime(text);
    return at ?? fail(name, 'must be an ISO 8601 date-time with a zone (2026-11-28T09:00:00-03:00)');
  };
  const filter: AuditFilter = {
    tenantId:
      tenantId === undefined
        ? undefined
        : isUuid(tenantId)
          ? tenantId.toLowerCase()
          : fail('tenant_id', 'must be a UUID'),
    action:
      action === undefined || AUDIT_ACTION.test(action)
        ? action
        : fail('action', 'must be an action (tenant.create) or a group ending in a dot (jobs.)'),
    operator:
      operator === undefined || (operator !== '' && operator.length <= AUDIT_OPERATOR_MAX && !CONTROL.test(operator))
        ? operator
        : fail('operator', `must be 1 to ${AUDIT_OPERATOR_MAX} printable characters`),
    since: time('since'),
    until: time('until'),
  };
  if (filter.since && filter.until && filter.since >= filter.until) fail('until', 'must be after since');
  return filter;
}

/** An ISO 8601 date-time with its zone (Z or an offset); a time without one is ambiguous, so refused. */
function isoTime(text: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** ?limit: 1 to ADMIN_MAX_PAGE, 100 when absent. */
export function pageLimit(ctx: GatewayContext, errors?: FieldError[]): number {
  const value = queryText(ctx, 'limit');
  if (value === undefined) return 100;
  if (/^[1-9]\d{0,5}$/.test(value) && Number(value) <= ADMIN_MAX_PAGE) return Number(value);
  const error: FieldError = {
    in: 'query',
    path: 'limit',
    message: `must be a whole number from 1 to ${ADMIN_MAX_PAGE}`,
  };
  if (errors) {
    errors.push(error);
    return 100;
  }
  throw validationError([error]);
}
