/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';

/** A state or status as a coloured label (the class is the value, from a closed set of the API's). */
export function Badge({ value }: { value: string }) {
  return <span class={`badge ${value.replace(/[^a-z_]/gi, '').toLowerCase()}`}>{value}</span>;
}

/** Label/value pairs. */
export function Facts({ rows }: { rows: ReadonlyArray<[string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {rows.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value}</dd>
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
  if (!next) return null;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v);
  params.set('cursor', next);
  return (
    <p class="pager">
      <a href={`${base}?${params.toString()}`} rel="next">
        Next page →
      </a>
    </p>
  );
}
