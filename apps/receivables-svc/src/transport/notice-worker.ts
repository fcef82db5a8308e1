import { startPeriodic } from '@payments/lifecycle';
import type { Logger } from '@payments/logger';
import { applyDueNotices, rearmNoticesOfKnownCharges, type NoticeDeps } from '../domain/notices';

/** How often the worker looks for due notices when nothing wakes it (retries fall due on their own). */
export const NOTICE_POLL_MS = 1_000;
/** How often notices waiting for a charge not known then are looked at again (their charge may be known now). */
export const NOTICE_REARM_MS = 5_000;

export interface NoticeWorker {
  /** A notice was stored: look now rather than at the next poll. */
  wake(): void;
  /** Stops looking and waits for the notice being applied. */
  stop(): Promise<void>;
}

/**
 * Applies stored bank notices on this instance: at once when woken (a notice stored here), and every
 * `pollMs` for those stored by other instances or due for a retry; every NOTICE_REARM_MS, notices
 * waiting for a charge that is known now fall due at once. Instances share the work: each
 * notice is claimed by one (domain/notices.ts).
 */
export function startNoticeWorker(deps: NoticeDeps & { logger: Logger }, pollMs = NOTICE_POLL_MS): NoticeWorker {
  let stopped = false;
  let woken = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const run = () => {
    timer = undefined;
    woken = false;
    running = (async () => {
      // A full batch: there may be more due at once.
      while (!stopped && (await applyDueNotices(deps)) > 0);
    })()
      .catch((err: unknown) => deps.logger.warn({ err }, 'applying bank notices failed; the next run retries'))
      .finally(() => {
        running = undefined;
        schedule(woken ? 0 : pollMs);
      });
  };
  const schedule = (delayMs: number) => {
    if (stopped || running || timer) return;
    timer = setTimeout(run, delayMs);
    timer.unref();
  };
  schedule(0);
  const rearm = startPeriodic(
    async () => {
      if ((await rearmNoticesOfKnownCharges(deps.db)) > 0) wake();
    },
    { intervalMs: NOTICE_REARM_MS, logger: deps.logger, what: 'bank notices of charges known now' },
  );
  function wake() {
    woken = true;
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    schedule(0);
  }
  return {
    wake,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await rearm.stop();
      await running;
    },
  };
}
