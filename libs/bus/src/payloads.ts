import { headers as natsHeaders, JSONCodec, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import { ClaimCheck, CLAIM_HEADER, type ClaimStoreLimits } from './claim-check';

/** Request and reply bodies as they travel: JSON, or a claim check when too large for a NATS message. */
export interface PayloadCodec {
  encode(value: unknown): Promise<{ data: Uint8Array; headers?: MsgHdrs }>;
  decode(msg: Msg): Promise<unknown>;
}

const json = JSONCodec<unknown>();

/**
 * JSON on the wire. A body larger than `threshold` bytes (default: the server's max_payload minus
 * 64 KiB) goes into the `<prefix>_claims` object store, and the message carries only its name in a header.
 */
export function payloadCodec(
  connection: NatsConnection,
  prefix: string,
  threshold?: number,
  limits: ClaimStoreLimits = {},
): PayloadCodec {
  const claims = new ClaimCheck(connection.jetstream(), `${prefix}_claims`, undefined, limits);
  const limit = threshold ?? Math.max(1024, connection.info!.max_payload - 64 * 1024);
  return {
    async encode(value) {
      const data = json.encode(value);
      if (data.length <= limit) return { data };
      const headers = natsHeaders();
      headers.set(CLAIM_HEADER, await claims.put(data));
      return { data: new Uint8Array(0), headers };
    },
    async decode(msg) {
      const claim = msg.headers?.get(CLAIM_HEADER);
      return json.decode(claim ? await claims.take(claim) : msg.data);
    },
  };
}
