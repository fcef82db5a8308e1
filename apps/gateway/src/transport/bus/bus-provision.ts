import { connectBus, formatProvisionReport, provisionBus, type ProvisionReport } from '@payments/bus';
import { busCredentialChecks, loadCommonConfig, requireProductionSecrets, type CommonConfig } from '@payments/config';
import { createLogger } from '@payments/logger';

/**
 * `npm run admin -- bus provision`: creates or raises every stream, durable consumer and claim store
 * of BUS_PREFIX (libs/bus provision.ts) with STREAM_MAX_BYTES and STREAM_REPLICAS, logged in as the
 * provisioning user (NATS_USER=admin and NATS_PASSWORD, or NATS_CREDS; TLS as the apps take it). It
 * never lowers a stream's replicas or max_bytes. Services only check at start what it made
 * (docs/architecture.md); `npm start` and the deploys run it before them. No database is needed.
 */
export async function provisionFromConfig(config: CommonConfig): Promise<ProvisionReport> {
  // In production its login is checked as a service's is: present, and no development default.
  requireProductionSecrets(config.nodeEnv, busCredentialChecks(config));
  // Retries while the cluster is not ready are logged on stderr: stdout is the report (or its JSON).
  const logger = createLogger('bus-provision', process.env.LOG_LEVEL ?? 'warn', process.stderr);
  const bus = await connectBus({
    url: config.natsUrl,
    prefix: config.busPrefix,
    name: 'bus-provision',
    credentials: config,
    streamSettings: config,
    logger,
    timeoutMs: config.busTimeoutMs,
  });
  try {
    return await provisionBus(bus.connection, {
      prefix: config.busPrefix,
      maxBytes: config.streamMaxBytes,
      replicas: config.streamReplicas,
      logger,
    });
  } finally {
    await bus.close();
  }
}

/** The report for a person: a line per stream, consumer and claim store, with what changed or was kept. */
export function describeProvisioning(report: ProvisionReport): string {
  return formatProvisionReport(report);
}

/**
 * As `bus provision` with `env` for its settings (NATS_URL, BUS_PREFIX, STREAM_MAX_BYTES,
 * STREAM_REPLICAS, the NATS login): what a test or bench runs before the apps it starts itself, with
 * the environment it gives them.
 */
export function provisionFromEnv(env: Record<string, string | undefined>): Promise<ProvisionReport> {
  return provisionFromConfig(loadCommonConfig(env));
}
