import { connect, nanos } from 'nats';
import { CLAIM_STORE_TTL_MS, claimStoreStream, type ClaimRouting } from '../src';

/** A bus lib test's claim stores: the routing its buses take (BusOptions.claimRouting), and their removal. */
export interface TestClaimStores<S extends string> {
  routing: ClaimRouting<S, string>;
  /** Deletes the stores' streams (afterAll). */
  remove(): Promise<void>;
}

/**
 * The claim stores of a test registry's services, on an open dev NATS: the services never create
 * them (the provisioner does), so a test that sends large bodies creates its own here, as
 * `npm run admin -- bus provision` would (nats.js's object store, the production TTL).
 * `servers`: who serves each request subject; `askers`: the other services that get replies.
 */
export async function testClaimStores<S extends string>(
  url: string,
  prefix: string,
  servers: { readonly [K in S]: string },
  askers: readonly string[],
): Promise<TestClaimStores<S>> {
  const recipients = [...new Set([...Object.values<string>(servers), ...askers])];
  const routing: ClaimRouting<S, string> = {
    servers,
    recipients,
    storeName: (p, service) => `${p}_claims_${service}`,
  };
  const nc = await connect({ servers: url });
  try {
    const js = nc.jetstream();
    for (const service of recipients)
      await js.views.os(routing.storeName(prefix, service), { ttl: nanos(CLAIM_STORE_TTL_MS) });
  } finally {
    await nc.close();
  }
  return {
    routing,
    async remove() {
      const admin = await connect({ servers: url });
      try {
        const jsm = await admin.jetstreamManager();
        for (const service of recipients)
          await jsm.streams.delete(claimStoreStream(routing.storeName(prefix, service))).catch(() => undefined);
      } finally {
        await admin.close();
      }
    },
  };
}
