/** @jsxRuntime automatic @jsxImportSource preact */
import type { AdminSchemas } from '../admin-client';
import { useFormats } from '../../views/locale';
import { OperatorFrame, type PageContext } from './frame';

type AuditPage = AdminSchemas['AdminAuditPage'];

export interface AuditProps {
  page: PageContext;
  audit: AuditPage;
  /** The filter in force, if any. */
  tenantId: string | undefined;
  /** Rows per page when not the default (kept in the links). */
  limit: number | undefined;
  /** Whether this page is a later one (a link back to the first). */
  paged: boolean;
}

/** Who changed what and when, oldest first, a page at a time (the cursor goes in the link). */
export function AuditLogPage({ page, audit, tenantId, limit, paged }: AuditProps) {
  const { dateTime: when } = useFormats();
  const query = (extra: Record<string, string>) =>
    `/operator/audit?${new URLSearchParams({
      ...(tenantId ? { tenant_id: tenantId } : {}),
      ...(limit === undefined ? {} : { limit: String(limit) }),
      ...extra,
    }).toString()}`;
  return (
    <OperatorFrame page={page} title="Audit log">
      <form method="get" action="/operator/audit" class="filters">
        <label>
          Tenant id
          <input name="tenant_id" value={tenantId ?? ''} size={38} placeholder="all tenants" />
        </label>
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      {audit.items.length === 0 ? (
        <p class="muted empty">Nothing recorded{paged ? ' after the previous page' : ''}.</p>
      ) : (
        <table class="audit">
          <thead>
            <tr>
              <th class="num">#</th>
              <th>When</th>
              <th>Operator</th>
              <th>Action</th>
              <th>Tenant</th>
              <th>Details</th>
            </tr>
          </thead>
          <tbody>
            {audit.items.map((e) => (
              <tr key={e.id} data-audit-id={e.id}>
                <td class="num">{e.id}</td>
                <td>{when(e.at)}</td>
                <td>{e.operator}</td>
                <td class="mono">{e.action}</td>
                <td class="mono">
                  {e.tenant_id ? <a href={`/operator/tenants/${e.tenant_id}`}>{e.tenant_id}</a> : '—'}
                </td>
                <td class="mono">
                  {Object.entries(e.details)
                    .map(([k, v]) => `${k}=${v === null ? 'null' : String(v)}`)
                    .join(' ')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="pages">
        {paged && <a href={query({})}>First page</a>}
        {audit.next_cursor && (
          <a href={query({ cursor: audit.next_cursor })} rel="next">
            Next page
          </a>
        )}
      </nav>
    </OperatorFrame>
  );
}
