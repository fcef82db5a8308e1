import { Webhook } from 'standardwebhooks';

/** Standard Webhooks headers for one attempt: the signature covers "id.timestamp.body". */
export function signedHeaders(secret: string, eventId: string, body: string, at: Date): Record<string, string> {
  const signature = new Webhook(secret).sign(eventId, at, body);
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}
