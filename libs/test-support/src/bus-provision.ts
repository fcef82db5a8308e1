import { connect } from 'nats';

/**
 * Removes what a test provisioned under its prefix (`npm run admin -- bus provision`, or the gateway's
 * provisionFromEnv): every stream `<prefix>_*` and object store `OBJ_<prefix>_*` on the NATS at `url`
 * (default NATS_URL, else the local one; a comma-separated list as the apps take it), so parallel
 * tests leave nothing behind.
 */
export async function removeBus(prefix: string, url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'): Promise<void> {
  const servers = url
    .split(',')
    .map((one) => one.trim())
    .filter((one) => one.length > 0);
  const nc = await connect({ servers });
  try {
    const jsm = await nc.jetstreamManager();
    for await (const stream of jsm.streams.list()) {
      const name = stream.config.name;
      if (name.startsWith(`${prefix}_`) || name.startsWith(`OBJ_${prefix}_`)) await jsm.streams.delete(name);
    }
  } finally {
    await nc.drain();
  }
}
