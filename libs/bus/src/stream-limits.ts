import type { NatsConnection } from 'nats';

/** STREAM_MAX_BYTES when a bus is opened without settings (a test's, a tool's): small, since JetStream reserves it on disk. */
export const DEFAULT_STREAM_MAX_BYTES = 64 * 1024 * 1024;

/** How full one stream is: its bytes against its max_bytes (messages against max_msgs, whichever is fuller). */
export interface StreamFill {
  /** The stream's name without the prefix (`registrations`, `dead_letters`). */
  stream: string;
  messages: number;
  bytes: number;
  maxBytes: number;
  /** 0..1; 0 for a stream without limits. */
  ratio: number;
}

/** The fill of each stream `<prefix>_<name>` that exists (a stream not created yet is left out). */
export async function streamFill(nc: NatsConnection, prefix: string, names: readonly string[]): Promise<StreamFill[]> {
  const jsm = await nc.jetstreamManager();
  const fills: StreamFill[] = [];
  for (const name of names) {
    const info = await jsm.streams.info(`${prefix}_${name}`).catch((err: Error) => {
      if (/not found/i.test(err.message)) return undefined;
      throw err;
    });
    if (!info) continue;
    const { bytes, messages } = info.state;
    const { max_bytes: maxBytes, max_msgs: maxMsgs } = info.config;
    const ratio = Math.max(maxBytes > 0 ? bytes / maxBytes : 0, maxMsgs > 0 ? messages / maxMsgs : 0);
    fills.push({ stream: name, messages, bytes, maxBytes, ratio });
  }
  return fills;
}

/**
 * A failed publish in words: JetStream's refusal (`maximum bytes exceeded`, a wrong expected stream)
 * travels in api_error while the message says only `503`; that is what an operator needs to read.
 */
export function publishErrorText(err: unknown): string {
  const e = err as { message?: string; code?: string; api_error?: { description?: string; err_code?: number } };
  const refusal = e?.api_error?.description;
  if (refusal) return `${refusal} (JetStream error ${e.api_error?.err_code ?? e.code})`;
  if (e?.code === '503') return 'no stream takes this subject (no responders)';
  if (e?.code === 'MAX_PAYLOAD_EXCEEDED') return "larger than the NATS server's max_payload (MAX_PAYLOAD_EXCEEDED)";
  return e?.message ?? String(err);
}
