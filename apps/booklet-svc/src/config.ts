import {
  busCredentialChecks,
  envInt,
  envOptional,
  envString,
  loadCommonConfig,
  requireProductionSecrets,
  type CommonConfig,
  databaseCredentialChecks,
} from '@payments/config';
import { DEV_DOWNLOAD_LINK_SECRET, downloadLinkSecret } from '@payments/signed-links';

/**
 * booklet-svc's settings. Each field is named after its variable (BOOKLET_PORT is port, BOOKLET_MAX_WAIT_MS
 * maxWaitMs); docs/configuration.md lists them with their defaults.
 */
export interface BookletConfig extends CommonConfig {
  /** Ops HTTP port (/healthz, /readyz, /metrics); 0 = any free port (tests). */
  port: number;
  /** Base of the gateway's public URL: download links point there. */
  publicBaseUrl: string;
  downloadLinkSecret: string;
  downloadLinkTtlSeconds: number;
  /** How long a booklet waits for its installments to be registered before it fails. */
  maxWaitMs: number;
  /** Days a built PDF is kept before its partition is dropped; a download after that rebuilds it. */
  fileRetentionDays: number;
}

export function loadBookletConfig(env: Record<string, string | undefined> = process.env): BookletConfig {
  const common = loadCommonConfig(env);
  requireProductionSecrets(common.nodeEnv, [
    {
      variable: 'DOWNLOAD_LINK_SECRET',
      value: envOptional('DOWNLOAD_LINK_SECRET', env),
      developmentDefaults: [DEV_DOWNLOAD_LINK_SECRET],
      hint: 'the same as the gateway',
    },
    ...busCredentialChecks(common),
    ...databaseCredentialChecks(common),
  ]);
  return {
    ...common,
    port: envInt('BOOKLET_PORT', 3500, env),
    publicBaseUrl: envString('PUBLIC_BASE_URL', `http://localhost:${envInt('PORT', 3000, env)}`, env),
    downloadLinkSecret: downloadLinkSecret(env, common.nodeEnv),
    downloadLinkTtlSeconds: envInt('DOWNLOAD_LINK_TTL_SECONDS', 7 * 24 * 3600, env, 1),
    maxWaitMs: envInt('BOOKLET_MAX_WAIT_MS', 3_600_000, env, 1),
    fileRetentionDays: envInt('BOOKLET_FILE_RETENTION_DAYS', 30, env, 1),
  };
}
