import { createHash } from 'node:crypto';
import { nuid, type NatsConnection, type NatsError } from 'nats';
import { ServiceError } from '@payments/contracts';

/**
 * NATS refuses messages above the server's max_payload (1 MB by default), and a 1 MiB request body
 * plus its envelope does not fit. Bodies above a threshold travel by claim check: the sender puts the
 * bytes in the object store of the service they are addressed to (`claimStoreName` in libs/contracts)
 * and the message carries the object's name (CLAIM_HEADER) and the body's digest (CLAIM_DIGEST_HEADER).
 * The recipient reads from its own store only, checks the digest and removes the object; objects it
 * never reads expire with the store's TTL.
 *
 * The stores are created by the provisioner (`npm run admin -- bus provision`), never here. A sender
 * only publishes into the store (JetStream publishes, no read, consumer or purge: another service's
 * store is not its own to read), in the layout of nats.js's object store, so the recipient, or an
 * operator with nats.js or the nats CLI, can read an object as any other.
 */
export const CLAIM_HEADER = 'Claim-Check';

/**
 * The SHA-256 of the claim-checked body, `SHA-256=<base64url>` as nats.js writes an object's digest:
 * it binds the object to its message, so a body put in the store under the same name by another
 * writer is refused, not read as the sender's.
 */
export const CLAIM_DIGEST_HEADER = 'Claim-Digest';

/** How long a claim-checked body is kept when its receiver never comes (the store's TTL). */
export const CLAIM_STORE_TTL_MS = 10 * 60_000;

/** The JetStream stream behind an object store (nats.js's `OBJ_` prefix). */
export function claimStoreStream(store: string): string {
  return `OBJ_${store}`;
}

/** The digest a message carries for `data`, in nats.js's object digest format. */
export function claimDigest(data: Uint8Array): string {
  const base64 = createHash('sha256').update(data).digest('base64');
  return `SHA-256=${base64.replace(/\+/g, '-').replace(/\//g, '_')}`;
}

/** A claim store the provisioner has not created (or that was removed): nothing is put in or read from it. */
export class ClaimStoreMissingError extends ServiceError {
  constructor(readonly store: string) {
    super(
      'service_unavailable',
      `the claim store ${store} (stream ${claimStoreStream(store)}) does not exist: run \`npm run admin -- bus provision\``,
    );
  }
}

/** Why a claim-checked body was refused: its object is gone, or its bytes are not the ones the message names. */
export type ClaimRefusal = 'missing' | 'digest_mismatch' | 'no_digest' | 'unreadable';

/**
 * A claim-checked body the recipient does not read: a poison message, logged and counted
 * (bus_claims_refused_total). An internal error: the asker sent a valid body, what reached the
 * recipient is not it.
 */
export class ClaimRefusedError extends ServiceError {
  constructor(
    readonly store: string,
    readonly object: string,
    readonly reason: ClaimRefusal,
  ) {
    super('internal_error', `the claim-checked body ${object} in ${store} was refused (${reason})`);
  }
}

/** What a sender's put leaves in the message's headers. */
export interface ClaimTicket {
  name: string;
  digest: string;
}

/** nats.js's object metadata (ObjectStoreMeta on the `$O.<bucket>.M.<name>` subject), as it writes it. */
interface ObjectMeta {
  bucket: string;
  nuid: string;
  size: number;
  chunks: number;
  name: string;
  description: string;
  options: { max_chunk_size: number };
  mtime: string;
  digest: string;
  deleted: boolean;
}

/** nats.js's chunk size; never above the server's max_payload. */
const MAX_CHUNK = 128 * 1024;

function chunkSubject(store: string, id: string): string {
  return `$O.${store}.C.${id}`;
}

/** nats.js names an object's metadata subject by the padded base64url of its name. */
function metaSubject(store: string, name: string): string {
  const base64 = Buffer.from(name).toString('base64');
  return `$O.${store}.M.${base64.replace(/\+/g, '-').replace(/\//g, '_')}`;
}

/**
 * Puts bodies in other services' claim stores with plain JetStream publishes (chunks, then the
 * metadata), as nats.js's ObjectStore.put does, but without its info call (a read) and its purge of a
 * replaced object's chunks: a writer may do neither. A put that fails half-way leaves its chunks to
 * the store's TTL.
 */
export class ClaimWriter {
  constructor(private readonly connection: NatsConnection) {}

  async put(store: string, data: Uint8Array): Promise<ClaimTicket> {
    const js = this.connection.jetstream();
    const name = nuid.next();
    const id = nuid.next();
    const chunkSize = Math.min(MAX_CHUNK, this.connection.info?.max_payload ?? MAX_CHUNK);
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < data.length; at += chunkSize) chunks.push(data.subarray(at, at + chunkSize));
    const digest = claimDigest(data);
    const meta: ObjectMeta = {
      bucket: store,
      nuid: id,
      size: data.length,
      chunks: chunks.length,
      name,
      description: '',
      options: { max_chunk_size: chunkSize },
      mtime: new Date().toISOString(),
      digest,
      deleted: false,
    };
    // No rollup header (nats.js's put sends one): names are fresh, there is nothing to replace, and
    // the stores refuse rollups, which would let any writer purge every body waiting in the store.
    try {
      await Promise.all(chunks.map((chunk) => js.publish(chunkSubject(store, id), chunk)));
      await js.publish(metaSubject(store, name), JSON.stringify(meta));
    } catch (err) {
      // No stream listens on the store's subjects: the store was never provisioned.
      if ((err as NatsError).code === '503') throw new ClaimStoreMissingError(store);
      throw err;
    }
    return { name, digest };
  }
}

/** A message of the store as the STREAM.MSG.GET API returns it. */
interface StoredMessage {
  seq: number;
  data: Uint8Array;
}

interface MsgGetResponse {
  message?: { seq: number; data?: string };
  error?: { code: number; err_code?: number; description?: string };
}

/** JetStream's error codes the reader tells apart: no such message, no such stream. */
const NO_MESSAGE_FOUND = 10037;
const STREAM_NOT_FOUND = 10059;

/** How long one JetStream API call of the reader may take. */
const API_TIMEOUT_MS = 5_000;

/**
 * Reads bodies from this service's own claim store, and removes each one read. It reads with the
 * stream's message API (`$JS.API.STREAM.MSG.GET.<stream>`, answered by the stream's leader, so a
 * body just put is there) and removes with `$JS.API.STREAM.MSG.DELETE.<stream>` by sequence, never
 * a purge: no consumer, no direct get, nothing beyond the service's own store. A refused body is
 * left to the store's TTL, where an operator can still look at it.
 */
export class ClaimReader {
  readonly stream: string;

  constructor(
    private readonly connection: NatsConnection,
    readonly store: string,
  ) {
    this.stream = claimStoreStream(store);
  }

  async take(ticket: { name: string; digest?: string }): Promise<Uint8Array> {
    const { name, digest } = ticket;
    if (!digest) throw new ClaimRefusedError(this.store, name, 'no_digest');
    const found = await this.read(name);
    if (claimDigest(found.data) !== digest) throw new ClaimRefusedError(this.store, name, 'digest_mismatch');
    // One round trip (the deletes go out together); one that fails leaves its message to the TTL.
    await Promise.allSettled(found.sequences.map((seq) => this.remove(seq)));
    return found.data;
  }

  /** The object's bytes and the sequences of its messages (chunks and metadata). */
  private async read(name: string): Promise<{ data: Uint8Array; sequences: number[] }> {
    const metaMessage = await this.get({ last_by_subj: metaSubject(this.store, name) });
    if (!metaMessage) throw new ClaimRefusedError(this.store, name, 'missing');
    const meta = parseMeta(metaMessage.data);
    if (!meta) throw new ClaimRefusedError(this.store, name, 'unreadable');
    if (meta.deleted) throw new ClaimRefusedError(this.store, name, 'missing');
    const parts: Uint8Array[] = [];
    const sequences = [metaMessage.seq];
    let from = 1;
    for (let i = 0; i < meta.chunks; i++) {
      // Chunks are published before their metadata: none lies past it.
      const chunk = await this.get({ seq: from, next_by_subj: chunkSubject(this.store, meta.nuid) });
      if (!chunk || chunk.seq > metaMessage.seq) throw new ClaimRefusedError(this.store, name, 'missing');
      parts.push(chunk.data);
      sequences.push(chunk.seq);
      from = chunk.seq + 1;
    }
    return { data: Buffer.concat(parts), sequences };
  }

  private async get(
    query: { last_by_subj: string } | { seq: number; next_by_subj: string },
  ): Promise<StoredMessage | undefined> {
    const reply = await this.connection.request(`$JS.API.STREAM.MSG.GET.${this.stream}`, JSON.stringify(query), {
      timeout: API_TIMEOUT_MS,
    });
    const response = JSON.parse(new TextDecoder().decode(reply.data)) as MsgGetResponse;
    return this.storedMessage(response);
  }

  private storedMessage(response: MsgGetResponse): StoredMessage | undefined {
    if (response.error?.err_code === NO_MESSAGE_FOUND) return undefined;
    if (response.error?.err_code === STREAM_NOT_FOUND) throw new ClaimStoreMissingError(this.store);
    if (response.error || !response.message)
      throw new Error(`reading claim store ${this.store}: ${response.error?.description ?? 'no message in the reply'}`);
    const { seq, data } = response.message;
    return { seq, data: data ? Buffer.from(data, 'base64') : new Uint8Array(0) };
  }

  /** Removes one message of the store; no_erase: the TTL bounds how long its bytes stay on disk anyway. */
  private async remove(seq: number): Promise<void> {
    await this.connection.request(`$JS.API.STREAM.MSG.DELETE.${this.stream}`, JSON.stringify({ seq, no_erase: true }), {
      timeout: API_TIMEOUT_MS,
    });
  }
}

/** The metadata a writer put, if it has the fields the reader uses. */
function parseMeta(data: Uint8Array): Pick<ObjectMeta, 'nuid' | 'chunks' | 'deleted'> | undefined {
  try {
    const meta = JSON.parse(new TextDecoder().decode(data)) as Partial<ObjectMeta>;
    const { nuid: id, chunks, deleted } = meta;
    // The nuid names the chunks' subject: a token of letters and digits, never a wildcard.
    if (typeof id !== 'string' || !/^[A-Za-z0-9]+$/.test(id)) return undefined;
    if (typeof chunks !== 'number' || !Number.isInteger(chunks) || chunks < 0) return undefined;
    return { nuid: id, chunks, deleted: deleted === true };
  } catch {
    return undefined;
  }
}
