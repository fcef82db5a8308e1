export {
  evaluateReadiness,
  migrationsCheck,
  natsCheck,
  postgresCheck,
  serviceChecks,
  DEFAULT_CHECK_TIMEOUT_MS,
  type CheckStatus,
  type PingableConnection,
  type ReadinessCheck,
  type ReadinessReport,
  type ServiceDependencies,
} from './checks';
export {
  HEALTHZ_PATH,
  READYZ_PATH,
  livenessHandler,
  mountHealthRoutes,
  readinessHandler,
  type HealthOptions,
} from './routes';
export {
  openOpsServer,
  startOpsServer,
  type OpsServerOptions,
  type RunningOpsServer,
  type ServiceOpsOptions,
} from './ops-server';
