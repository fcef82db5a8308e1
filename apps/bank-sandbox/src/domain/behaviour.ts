/**
 * How the sandbox answers, so tests and demos can make the bank misbehave:
 *  - mode (POST /sandbox/behaviour), for everything from now on: normal, reject (new registrations are
 *    refused), slow (registrations wait before answering), down (503 to all but /sandbox/* and /healthz);
 *  - a marker in the payer's name, for that one charge: [sandbox:reject], [sandbox:slow], [sandbox:fail]
 *    (503), so one batch can mix outcomes.
 */
export const BEHAVIOUR_MODES = ['normal', 'reject', 'slow', 'down'] as const;
export type BehaviourMode = (typeof BEHAVIOUR_MODES)[number];

export interface RegistrationPlan {
  /** accept: register; reject: 422 charge_rejected; fail: 503. Neither of the last two stores anything. */
  outcome: 'accept' | 'reject' | 'fail';
  /** Wait the configured delay before answering. */
  slow: boolean;
}

export function planRegistration(mode: BehaviourMode, payerName: string): RegistrationPlan {
  const marked = (marker: string) => payerName.toLowerCase().includes(`[sandbox:${marker}]`);
  const slow = mode === 'slow' || marked('slow');
  if (mode === 'down' || marked('fail')) return { outcome: 'fail', slow };
  if (mode === 'reject' || marked('reject')) return { outcome: 'reject', slow };
  return { outcome: 'accept', slow };
}

/** The current mode; in memory on purpose: a restarted sandbox is a healthy bank again. */
export class Behaviour {
  constructor(private current: BehaviourMode = 'normal') {}

  get mode(): BehaviourMode {
    return this.current;
  }

  set(mode: BehaviourMode): void {
    this.current = mode;
  }
}
