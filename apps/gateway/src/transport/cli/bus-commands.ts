import { BusProvisionError } from '@payments/bus';
import type { CommonConfig } from '@payments/config';
import { describeProvisioning, provisionFromConfig } from '../bus/bus-provision';

/**
 * `bus provision`: the bus only, no database (it runs before anything else: npm start, a deploy's Job).
 * A setting JetStream cannot change in place (a stream's retention), or a NATS user that may not
 * manage streams (a service's), is refused in one line.
 */
export async function provisionCommand(config: CommonConfig, json: boolean): Promise<number> {
  try {
    const report = await provisionFromConfig(config);
    console.log(json ? JSON.stringify(report) : describeProvisioning(report));
    return 0;
  } catch (err) {
    if (err instanceof BusProvisionError) console.error(`error: ${err.message}`);
    else if ((err as { code?: unknown })?.code === 'PERMISSIONS_VIOLATION')
      console.error(
        `error: NATS user ${config.natsUser ?? '(none)'} may not manage streams (${(err as Error).message}): ` +
          'run bus provision as the provisioning user (NATS_USER=admin and its NATS_PASSWORD)',
      );
    else throw err;
    return 1;
  }
}
