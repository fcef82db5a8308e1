/**
 * The environment variable a launcher (scripts/start.ts, behind `npm start`) sets to its own pid in
 * the environment of each app it starts: an app whose launcher dies, even by SIGKILL, stops itself
 * instead of running on with its port bound and nobody to stop it.
 */
export const STOP_WITH_PARENT_ENV = 'STOP_WITH_PARENT_PID';

/**
 * Calls `onGone` once `parentPid` is no longer this process's parent (the orphan is re-parented to
 * init or a subreaper). Polls process.ppid, which costs a system call; the timer does not keep the
 * process alive. Returns a function that stops watching.
 */
export function watchParent(parentPid: number, onGone: () => void, intervalMs = 250): () => void {
  const timer = setInterval(() => {
    if (process.ppid !== parentPid) {
      clearInterval(timer);
      onGone();
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The launcher's pid from the environment, when this process really is its child. */
export function launcherPid(env: Record<string, string | undefined> = process.env): number | undefined {
  const pid = Number(env[STOP_WITH_PARENT_ENV]);
  return Number.isInteger(pid) && pid > 1 && pid === process.ppid ? pid : undefined;
}
