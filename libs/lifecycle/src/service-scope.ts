/*
 * One start-up and shutdown for every service. A service's start is a list of what it opens (the
 * database, the bus, workers, servers), each registering its own closer as it opens; `stop()` and a
 * failed start close them in reverse order, so nothing opened before a failure is left behind (an
 * in-process start in the tests leaves no pool, connection or port). In the manner of svix-server's
 * one shutdown token and of kysely's `Symbol.asyncDispose`.
 */

export type Closer = () => Promise<unknown> | unknown;

/** Raised by `close()` when closers failed: each failure with the name of what it closed. */
export class CloseError extends AggregateError {
  override readonly name = 'CloseError';
}

/** What a service opened, in order, with how to close each. */
export class ServiceScope implements AsyncDisposable {
  private readonly closers: Array<{ name: string; close: Closer }> = [];
  private closing: Promise<void> | undefined;

  /** Registers `close` for what was just opened (`name` says what, in a failure). */
  defer(name: string, close: Closer): void {
    if (this.closing) throw new Error(`${name} opened while the service stops`);
    this.closers.push({ name, close });
  }

  /** Opens something and registers its closer in one step: it is closed only if it opened. */
  async open<T>(
    name: string,
    open: () => Promise<T> | T,
    close: (opened: T) => Promise<unknown> | unknown,
  ): Promise<T> {
    const opened = await open();
    this.defer(name, () => close(opened));
    return opened;
  }

  /** Closes everything, the last opened first; every closer runs even when one fails. Runs once. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async closeAll(): Promise<void> {
    const failures: Error[] = [];
    for (const { name, close } of [...this.closers].reverse()) {
      try {
        await close();
      } catch (err) {
        failures.push(
          new Error(`closing ${name} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err }),
        );
      }
    }
    if (failures.length > 0) throw new CloseError(failures, failures.map((f) => f.message).join('; '));
  }
}

/** A started service: what its start returned, and the stop that closes what it opened. */
export type Started<T> = T & { stop(): Promise<void> };

/**
 * Runs a service's start in a fresh scope. A start that throws closes what it had opened, then
 * rethrows the start's own error (a failure to close is attached as its `suppressed` cause).
 */
export async function startService<T extends object>(start: (scope: ServiceScope) => Promise<T>): Promise<Started<T>> {
  const scope = new ServiceScope();
  let started: T;
  try {
    started = await start(scope);
  } catch (err) {
    await scope.close().catch((closeErr: unknown) => {
      if (err instanceof Error) Object.assign(err, { suppressed: closeErr });
    });
    throw err;
  }
  return Object.assign(started, { stop: () => scope.close() });
}
