/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { ReceivableStates, StateLabels, type ReceivableState } from '@payments/contracts';
import { useFormats, type Formats } from '../../views/locale';

const CALLBACK_STATUSES = ['pending', 'delivered', 'dead'] as const;
type CallbackStatusName = (typeof CALLBACK_STATUSES)[number];

/** status_payment label (the wire's Portuguese) -> internal state. */
const STATE_OF_LABEL = new Map<string, ReceivableState>(
  ReceivableStates.map((state) => [StateLabels[state], state] as const),
);

/**
 * A state or status as a coloured label (the class is the value, from a closed set of the API's), its
 * text in the page's language: a charge's status_payment label or internal state, or with
 * kind="callback" a callback's status. Anything else is shown as it came.
 */
export function Badge({ value, kind = 'state' }: { value: string; kind?: 'state' | 'callback' }) {
  const { t } = useFormats();
  return <span class={`badge ${value.replace(/[^a-z_]/gi, '').toLowerCase()}`}>{badgeText(t, value, kind)}</span>;
}

function badgeText(t: Formats['t'], value: string, kind: 'state' | 'callback'): string {
  const labelled = STATE_OF_LABEL.get(value);
  if (labelled) return t(`state.${labelled}`);
  if (kind === 'callback' && isCallbackStatus(value)) return t(`callbackStatus.${value}`);
  if (kind === 'state' && isState(value)) return t(`state.${value}`);
  return value;
}

function isState(value: string): value is ReceivableState {
  return (ReceivableStates as readonly string[]).includes(value);
}

function isCallbackStatus(value: string): value is CallbackStatusName {
  return (CALLBACK_STATUSES as readonly string[]).includes(value);
}

/** The wire's payment type label (`naodefinido`, `Boleto`, `Pix`, `Manual`) in the page's language. */
export function paymentTypeText(t: Formats['t'], label: string): string {
  switch (label) {
    case 'naodefinido':
    case 'Boleto':
    case 'Pix':
    case 'Manual':
      return t(`paymentType.${label}`);
    default:
      return label;
  }
}

/** Label/value pairs; a row's id (when given) is on its value. */
export function Facts({
  rows,
}: {
  rows: ReadonlyArray<[string, ComponentChildren] | [string, ComponentChildren, string]>;
}) {
  return (
    <dl class="facts">
      {rows.map(([label, value, id]) => (
        <>
          <dt>{label}</dt>
          <dd id={id}>{value}</dd>
        </>
      ))}
    </dl>
  );
}

/** "Next page" when the API said more remain (X-Next-Cursor), keeping the filters. */
export function Pager({
  base,
  query,
  next,
}: {
  base: string;
  query: Record<string, string | undefined>;
  next?: string;
}) {
  const { t } = useFormats();
  if (!next) return null;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v);
  params.set('cursor', next);
  return (
    <p class="pager">
      <a href={`${base}?${params.toString()}`} rel="next">
        {t('pager.next')}
      </a>
    </p>
  );
}
