import { nanos, nuid, type JetStreamClient, type ObjectStore } from 'nats';
import { retryTransient } from './jetstream-retry';
import { untilStreamLed } from './stream-setup';

/**
 * How long opening the store is tried again while the cluster is not ready: it is opened on the first
 * large body, inside a request, so no longer than a request's default wait (BUS_TIMEOUT_MS).
 */
const OPEN_RETRY_MS = 10_000;

/**
 * NATS refuses messages above the server's max_payload (1 MB by default), and a 1 MiB request body
 * plus its envelope does not fit. Bodies above a threshold travel by claim check: the sender puts the
 * bytes in a JetStream object store and sends only the object's name in a header; the receiver reads
 * and deletes it. Objects expire on their own (TTL) if a receiver never comes.
 */
export const CLAIM_HEADER = 'Claim-Check';

/** The claim-check store's limits: STREAM_MAX_BYTES and STREAM_REPLICAS, as for every stream. */
export interface ClaimStoreLimits {
  /** A full store refuses a put (the request fails), never the disk. */
  maxBytes?: number;
  /** Unset: 1 for a new store, and an existing one keeps its own. */
  replicas?: number;
}

export class ClaimCheck {
  private store?: Promise<ObjectStore>;

  constructor(
    private readonly js: JetStreamClient,
    private readonly bucket: string,
    private readonly ttlMs = 10 * 60_000,
    private readonly limits: ClaimStoreLimits = {},
  ) {}

  private open(): Promise<ObjectStore> {
    this.store ??= this.openStore().catch((err: unknown) => {
      this.store = undefined;
      throw err;
    });
    return this.store;
  }

  private openStore(): Promise<ObjectStore> {
    return retryTransient(`object store ${this.bucket}`, () => this.openOrUpdateStore(), { budgetMs: OPEN_RETRY_MS });
  }

  private async openOrUpdateStore(): Promise<ObjectStore> {
    const { maxBytes, replicas } = this.limits;
    const store = await this.js.views.os(this.bucket, {
      ttl: nanos(this.ttlMs),
      description: 'large bus payloads (claim check)',
      ...(replicas ? { replicas } : {}),
      ...(maxBytes ? { max_bytes: maxBytes } : {}),
    });
    // views.os leaves an existing store as it is: bring it to the limits given, as ensure does a
    // stream. A bus opened without them (a tool's) leaves the store as the services set it.
    const { config } = (await store.status()).streamInfo;
    const update = {
      ...(replicas && config.num_replicas !== replicas ? { num_replicas: replicas } : {}),
      ...(maxBytes && config.max_bytes !== maxBytes ? { max_bytes: maxBytes } : {}),
    };
    if (Object.keys(update).length > 0) {
      const jsm = await this.js.jetstreamManager();
      await jsm.streams.update(config.name, update);
      if (update.num_replicas) await untilStreamLed(jsm, config.name);
    }
    return store;
  }

  async put(data: Uint8Array): Promise<string> {
    const name = nuid.next();
    await (await this.open()).putBlob({ name }, data);
    return name;
  }

  async take(name: string): Promise<Uint8Array> {
    const store = await this.open();
    const data = await store.getBlob(name);
    if (!data) throw new Error(`claim-checked payload ${name} is missing (expired?)`);
    await store.delete(name).catch(() => undefined);
    return data;
  }
}
