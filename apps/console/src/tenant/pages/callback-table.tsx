/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import { useFormats } from '../../views/locale';
import { Badge } from './parts';

type CallbackEventSummary = components['schemas']['CallbackEventSummary'];

/** Callback events, each linking to its attempts. */
export function CallbackTable({ items, id }: { items: readonly CallbackEventSummary[]; id: string }) {
  const { t, dateTime: when } = useFormats();
  return (
    <table id={id}>
      <thead>
        <tr>
          <th>{t('callbacks.event')}</th>
          <th>{t('callbacks.type')}</th>
          <th>{t('callbacks.status')}</th>
          <th class="num">{t('callbacks.attempts')}</th>
          <th>{t('callbacks.created')}</th>
          <th>{t('callbacks.deliveredOrNext')}</th>
          <th>{t('callbacks.url')}</th>
        </tr>
      </thead>
      <tbody>
        {items.map((e) => (
          <tr data-event={e.event_id}>
            <td class="mono">
              <a href={`/tenant/callbacks/${encodeURIComponent(e.event_id)}`}>{e.event_id}</a>
            </td>
            <td>{e.event_type}</td>
            <td>
              <Badge value={e.status} kind="callback" />
            </td>
            <td class="num">{e.attempt_count}</td>
            <td>{when(e.created_at)}</td>
            <td>
              {e.delivered_at
                ? when(e.delivered_at)
                : e.next_attempt_at
                  ? t('callbacks.next', { when: when(e.next_attempt_at) })
                  : '—'}
            </td>
            <td class="mono">{e.url}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
