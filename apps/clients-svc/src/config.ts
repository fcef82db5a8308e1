import { envInt, loadCommonConfig, type CommonConfig } from '@payments/config';

export interface ClientsConfig extends CommonConfig {
  /** Ops HTTP port (/healthz, /readyz, /metrics); 0 = any free port (tests). */
  port: number;
}

export function loadClientsConfig(env: Record<string, string | undefined> = process.env): ClientsConfig {
  return { ...loadCommonConfig(env), port: envInt('CLIENTS_PORT', 3300, env) };
}
