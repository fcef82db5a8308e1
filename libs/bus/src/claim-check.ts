import { nanos, nuid, type JetStreamClient, type ObjectStore } from 'nats';

/**
 * NATS refuses messages above the server's max_payload (1 MB by default), and a 1 MiB request body
 * plus its envelope does not fit. Bodies above a threshold travel by claim check: the sender puts the
 * bytes in a JetStream object store and sends only the object's name in a header; the receiver reads
 * and deletes it. Objects expire on their own (TTL) if a receiver never comes.
 */
export const CLAIM_HEADER = 'Claim-Check';

export class ClaimCheck {
  private store?: Promise<ObjectStore>;

  constructor(
    private readonly js: JetStreamClient,
    private readonly bucket: string,
    private readonly ttlMs = 10 * 60_000,
    /** STREAM_MAX_BYTES, as for every stream: a full store refuses a put (the request fails), never the disk. */
    private readonly maxBytes?: number,
  ) {}

  private open(): Promise<ObjectStore> {
    this.store ??= this.js.views.os(this.bucket, {
      ttl: nanos(this.ttlMs),
      description: 'large bus payloads (claim check)',
      ...(this.maxBytes ? { max_bytes: this.maxBytes } : {}),
    });
    return this.store;
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
