import { loadCommonConfig, type CommonConfig } from '@payments/config';

export type ClientsConfig = CommonConfig;

export function loadClientsConfig(env: Record<string, string | undefined> = process.env): ClientsConfig {
  return loadCommonConfig(env);
}
