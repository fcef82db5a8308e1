/** @jsxRuntime automatic @jsxImportSource preact */
import type { ConsoleContext } from '../http/context';
import { BadInputError } from '../http/errors';
import { single } from '../http/form';
import { brasiliaInstant } from '../views/locale';
import { render } from '../views/render';
import { expectData } from './admin-client';
import type { OperatorKit } from './handler-kit';
import { AuditLogPage, type AuditFilterForm } from './pages/audit';

/** Rows per page of the audit log. */
const AUDIT_PAGE = 50;

/** GET /audit: the audit log, filtered and paged. */
export async function auditPage({ api, page }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const filter = auditFilterForm(ctx);
  const cursor = single(ctx.query.cursor);
  const limit = pageSize(single(ctx.query.limit));
  const audit = await expectData(
    'audit log',
    api(ctx).GET('/admin/v1/audit', {
      params: {
        query: {
          tenant_id: filter.tenant_id,
          action: filter.action,
          operator: filter.operator,
          since: instantOf('since', filter.since),
          until: instantOf('until', filter.until),
          cursor,
          limit,
        },
      },
    }),
  );
  render(
    ctx,
    <AuditLogPage
      page={page(ctx)}
      audit={audit}
      filter={filter}
      limit={limit === AUDIT_PAGE ? undefined : limit}
      paged={cursor !== undefined}
    />,
  );
}

/** The audit page's filters as typed; empty fields are left out (the admin API checks the rest, naming the field). */
function auditFilterForm(ctx: ConsoleContext): AuditFilterForm {
  const field = (name: keyof AuditFilterForm) => {
    const value = single(ctx.query[name])?.trim();
    return value === undefined || value === '' ? {} : { [name]: value };
  };
  return { ...field('tenant_id'), ...field('action'), ...field('operator'), ...field('since'), ...field('until') };
}

/** A `datetime-local` value in Brasília time as the instant the admin API takes. */
function instantOf(name: 'since' | 'until', local: string | undefined): string | undefined {
  if (local === undefined) return undefined;
  const at = brasiliaInstant(local);
  if (at === undefined) throw new BadInputError(name, 'must be a date and time (dd/mm/aaaa hh:mm)');
  return at;
}

/** ?limit= of the audit page: rows per page, AUDIT_PAGE by default (the admin API checks the range). */
function pageSize(text: string | undefined): number {
  if (text === undefined) return AUDIT_PAGE;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new BadInputError('limit', 'must be a whole number of rows');
  return n;
}
