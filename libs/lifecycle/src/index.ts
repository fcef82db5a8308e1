export { launcherPid, STOP_WITH_PARENT_ENV, watchParent } from './parent-watch';
export { closeServer, keepConnectionsAlive, KEEP_ALIVE_TIMEOUT_MS, listen } from './http-server';
export { startPeriodic, type Periodic, type PeriodicOptions } from './periodic';
export { CloseError, ServiceScope, startService, type Closer, type Started } from './service-scope';
export {
  describeStartupFailure,
  portInUseMessage,
  type PortInUse,
  type StartupContext,
  type StartupProblem,
} from './startup-problems';
export { addShutdownHook, loadConfigOrExit, runUntilSignal, type Stop } from './run-until-signal';
