/** @jsxRuntime automatic @jsxImportSource preact */
import type { AdminSchemas } from '../admin-client';
import { useFormats } from '../../views/locale';
import type { MessageKey } from '../../views/messages';
import { OperatorFrame, type PageContext } from './frame';

type AuditPage = AdminSchemas['AdminAuditPage'];
type AuditEntry = AuditPage['items'][number];

/** The audit's filters as the form holds them (since/until: `datetime-local` values, Brasília time). */
export interface AuditFilterForm {
  tenant_id?: string;
  action?: string;
  operator?: string;
  since?: string;
  until?: string;
}

export interface AuditProps {
  page: PageContext;
  audit: AuditPage;
  /** The filters in force, as typed (kept in the links). */
  filter: AuditFilterForm;
  /** Rows per page when not the default (kept in the links). */
  limit: number | undefined;
  /** Whether this page is a later one (a link back to the first). */
  paged: boolean;
}

/** Who changed what, when and from where, newest first, filtered, a page at a time (the cursor goes in the link). */
export function AuditLogPage({ page, audit, filter, limit, paged }: AuditProps) {
  const { t, dateTime: when } = useFormats();
  const given = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined && v !== '')) as Record<
    string,
    string
  >;
  const query = (extra: Record<string, string>) =>
    `/operator/audit?${new URLSearchParams({
      ...given,
      ...(limit === undefined ? {} : { limit: String(limit) }),
      ...extra,
    }).toString()}`;
  return (
    <OperatorFrame page={page} title={t('operator.audit.title')}>
      <p class="muted">{t('operator.audit.lead')}</p>
      <form method="get" action="/operator/audit" class="filters">
        <label>
          {t('operator.audit.tenant')}
          <input
            name="tenant_id"
            value={filter.tenant_id ?? ''}
            size={38}
            placeholder={t('operator.audit.allTenants')}
          />
        </label>
        <label>
          {t('operator.audit.action')}
          <input name="action" value={filter.action ?? ''} size={20} placeholder={t('operator.audit.actionHint')} />
        </label>
        <label>
          {t('operator.audit.operator')}
          <input name="operator" value={filter.operator ?? ''} size={24} maxLength={200} />
        </label>
        <label>
          {t('operator.audit.since')}
          <input type="datetime-local" name="since" value={filter.since ?? ''} />
        </label>
        <label>
          {t('operator.audit.until')}
          <input type="datetime-local" name="until" value={filter.until ?? ''} />
        </label>
        <button type="submit" class="secondary">
          {t('operator.audit.filter')}
        </button>
        {Object.keys(given).length > 0 && <a href="/operator/audit">{t('operator.audit.clear')}</a>}
      </form>
      {audit.items.length === 0 ? (
        <p class="muted empty">{t(paged ? 'operator.audit.noneBefore' : 'operator.audit.none')}</p>
      ) : (
        <table class="audit">
          <thead>
            <tr>
              <th class="num">#</th>
              <th>{t('operator.audit.when')}</th>
              <th>{t('operator.audit.who')}</th>
              <th>{t('operator.audit.action')}</th>
              <th>{t('operator.audit.tenant')}</th>
              <th>{t('operator.audit.details')}</th>
              <th>{t('operator.audit.source')}</th>
              <th>{t('operator.audit.address')}</th>
            </tr>
          </thead>
          <tbody>
            {audit.items.map((e) => (
              <tr key={e.id} data-audit-id={e.id}>
                <td class="num">{e.id}</td>
                <td>{when(e.at)}</td>
                <td>{who(e)}</td>
                <td class="mono">{e.action}</td>
                <td class="mono">
                  {e.tenant_id ? <a href={`/operator/tenants/${e.tenant_id}`}>{e.tenant_id}</a> : '—'}
                </td>
                <td class="mono">
                  {Object.entries(e.details)
                    .map(([k, v]) => `${k}=${v === null ? 'null' : String(v)}`)
                    .join(' ')}
                </td>
                <td>{e.source ? t(`operator.audit.source.${e.source}` as MessageKey) : '—'}</td>
                <td class="mono">{e.address ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="pages">
        {paged && <a href={query({})}>{t('operator.audit.first')}</a>}
        {audit.next_cursor && (
          <a href={query({ cursor: audit.next_cursor })} rel="next">
            {t('operator.audit.next')}
          </a>
        )}
      </nav>
    </OperatorFrame>
  );
}

/** The operator as recorded, and the console user's e-mail when it is another text. */
function who(e: AuditEntry): string {
  const email = e.user_email ?? null;
  return email && email !== e.operator ? `${e.operator} (${email})` : e.operator;
}
