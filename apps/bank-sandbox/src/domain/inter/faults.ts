/**
 * Faults the Inter dialect shows from now on (POST /sandbox/inter/faults), in memory: what a real
 * bank does on a bad day, so our service is tested against it.
 */
export interface InterFaults {
  /** A charge's consult answers 404 for this long after its create (Inter issues asynchronously); 0 = off. */
  consult_not_found_ms: number;
  /** Each endpoint answers 429 with Retry-After beyond this many calls a minute per integration; null = off. */
  rate_limit_per_minute: number | null;
  /** No notice is sent (payments are found only by reconciliation). */
  drop_webhooks: boolean;
  /** Boletos are issued without PIX (no `pix` object), as for an account without a PIX key. */
  no_pix_key: boolean;
}

export function noFaults(): InterFaults {
  return { consult_not_found_ms: 0, rate_limit_per_minute: null, drop_webhooks: false, no_pix_key: false };
}

const MAX_MS = 86_400_000;

/** Applies the fields given in `fields` to `faults`; a message naming the first bad field, else null. */
export function applyFaults(faults: InterFaults, fields: Record<string, unknown>): string | null {
  const known = ['consult_not_found_ms', 'rate_limit_per_minute', 'drop_webhooks', 'no_pix_key'];
  const unknown = Object.keys(fields).find((k) => !known.includes(k));
  if (unknown) return `unknown fault "${unknown}"; the faults are ${known.join(', ')}`;
  const next = { ...faults };
  const { consult_not_found_ms: ms, rate_limit_per_minute: limit, drop_webhooks: drop, no_pix_key: noPix } = fields;
  if (ms !== undefined) {
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0 || ms > MAX_MS)
      return `consult_not_found_ms must be an integer from 0 to ${MAX_MS}`;
    next.consult_not_found_ms = ms;
  }
  if (limit !== undefined) {
    if (limit !== null && (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1))
      return 'rate_limit_per_minute must be a positive integer (or null: no limit)';
    next.rate_limit_per_minute = limit;
  }
  for (const [name, value] of [
    ['drop_webhooks', drop],
    ['no_pix_key', noPix],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'boolean') return `${name} must be a boolean`;
    next[name] = value;
  }
  Object.assign(faults, next);
  return null;
}
