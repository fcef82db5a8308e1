export {
  evaluateReadiness,
  migrationsCheck,
  natsCheck,
  postgresCheck,
  DEFAULT_CHECK_TIMEOUT_MS,
  type CheckStatus,
  type PingableConnection,
  type ReadinessCheck,
  type ReadinessReport,
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
