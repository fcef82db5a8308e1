import { GatewayError } from '../gateway/problem';

/**
 * One panel of a page fed by its own call: its data, or why it is missing. A service that does not
 * answer (the admin API's 5xx, or no answer at all) costs its panel only, not the page; a refusal
 * (4xx: a bad filter, a 401 that must end the session) is still thrown, since it is the page's.
 */
export type Panel<T> = { ok: true; value: T } | { ok: false; reason: string };

export async function panel<T>(call: Promise<T>): Promise<Panel<T>> {
  try {
    return { ok: true, value: await call };
  } catch (err) {
    if (!(err instanceof GatewayError) || err.status < 500) throw err;
    return { ok: false, reason: err.problem.detail ?? `HTTP ${err.status}` };
  }
}
