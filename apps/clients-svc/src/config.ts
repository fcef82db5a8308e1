import {
  busCredentialChecks,
  envInt,
  loadCommonConfig,
  requireProductionSecrets,
  type CommonConfig,
  databaseCredentialChecks,
} from '@payments/config';

export interface ClientsConfig extends CommonConfig {
  /** Ops HTTP port (/healthz, /readyz, /metrics); 0 = any free port (tests). */
  port: number;
}

export function loadClientsConfig(env: Record<string, string | undefined> = process.env): ClientsConfig {
  const common = loadCommonConfig(env);
  requireProductionSecrets(common.nodeEnv, [...busCredentialChecks(common), ...databaseCredentialChecks(common)]);
  return { ...common, port: envInt('CLIENTS_PORT', 3300, env) };
}
