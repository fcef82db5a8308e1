import { headers as natsHeaders, JSONCodec, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import {
  formatVersion,
  MESSAGE_VERSION_HEADER,
  REQUEST_REPLY_VERSION,
  ServiceError,
  versionProblem,
} from '@payments/contracts';
import { ClaimCheck, CLAIM_HEADER, type ClaimStoreLimits } from './claim-check';

/** Request and reply bodies as they travel: JSON, or a claim check when too large for a NATS message. */
export interface PayloadCodec {
  encode(value: unknown): Promise<{ data: Uint8Array; headers: MsgHdrs }>;
  decode(msg: Msg): Promise<unknown>;
}

const json = JSONCodec<unknown>();
const VERSION = formatVersion(REQUEST_REPLY_VERSION);

/**
 * JSON on the wire, its version (REQUEST_REPLY_VERSION) in a header; a body of a major this side does
 * not know is not read: decode throws a 503 naming the versions (the request or reply was sent by an
 * instance of another major, during a rolling upgrade). A body larger than `threshold` bytes (default: the server's max_payload minus
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
      const headers = natsHeaders();
      headers.set(MESSAGE_VERSION_HEADER, VERSION);
      if (data.length <= limit) return { data, headers };
      headers.set(CLAIM_HEADER, await claims.put(data));
      return { data: new Uint8Array(0), headers };
    },
    async decode(msg) {
      const problem = versionProblem(msg.headers?.get(MESSAGE_VERSION_HEADER), REQUEST_REPLY_VERSION);
      if (problem) throw new ServiceError('service_unavailable', problem);
      const claim = msg.headers?.get(CLAIM_HEADER);
      return json.decode(claim ? await claims.take(claim) : msg.data);
    },
  };
}
