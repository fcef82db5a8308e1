/**
 * Start-up failures an operator can fix, each said in one line: what is wrong and what to do. A
 * service logs it as its `fatal` line, without a stack (the stack of "connection refused" helps
 * nobody); `npm start` prints the same words before it starts anything.
 */
export interface StartupProblem {
  /** A short machine-readable name: unreachable, login_refused, no_jetstream, port_in_use, config... */
  problem: string;
  message: string;
}

export interface StartupContext {
  /** The ports the service listens on, by the environment variable that sets each, e.g. { PORT: 3000 }. */
  ports?: Record<string, number>;
}

/**
 * The one-line explanation of a known start-up failure, or undefined for anything else (which keeps
 * its stack). Known: errors marked `startupProblem` (Postgres or NATS out of reach, refused logins,
 * NATS without JetStream), configuration errors, and a port already in use or not allowed.
 */
export function describeStartupFailure(err: unknown, context: StartupContext = {}): StartupProblem | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Error & {
    startupProblem?: unknown;
    problem?: unknown;
    code?: unknown;
    syscall?: unknown;
    port?: unknown;
  };
  if (e.startupProblem === true)
    return { problem: typeof e.problem === 'string' ? e.problem : 'startup', message: e.message };
  if (e.name === 'ConfigError') return { problem: 'config', message: e.message };
  if (e.syscall === 'listen' && typeof e.port === 'number') {
    const variable = Object.entries(context.ports ?? {}).find(([, port]) => port === e.port)?.[0];
    if (e.code === 'EADDRINUSE')
      return { problem: 'port_in_use', message: portInUseMessage([{ port: e.port, variable }]) };
    if (e.code === 'EACCES') {
      return {
        problem: 'port_denied',
        message: `port ${e.port}${variable ? ` (${variable})` : ''} may not be opened by this user: ${variable ? `set ${variable}` : 'choose'} a port above 1023`,
      };
    }
  }
  return undefined;
}

export interface PortInUse {
  port: number;
  /** The environment variable that sets it, if known. */
  variable?: string;
}

/**
 * "port 3000 (PORT) is in use by <holder>: <what to do>". `holder` names what listens there, when
 * known: `another npm start (pid 4321)`, or `pid 999 (python3)`; `stop` says how to stop it.
 */
export function portInUseMessage(ports: PortInUse[], holder?: { name: string; stop: string }): string {
  const list = ports.map(({ port, variable }) => (variable ? `${port} (${variable})` : String(port)));
  const subject = ports.length === 1 ? `port ${list[0]} is` : `ports ${list.join(', ')} are`;
  const variables = ports.map((p) => p.variable).filter((v): v is string => v !== undefined);
  const elsewhere =
    variables.length === 0
      ? 'choose other ports'
      : `set ${joinAnd(variables)} to ${variables.length === 1 ? 'a free port' : 'free ports'}`;
  if (!holder) return `${subject} already in use: stop what listens there (another npm start?) or ${elsewhere}`;
  return `${subject} in use by ${holder.name}: ${holder.stop} or ${elsewhere}`;
}

function joinAnd(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
