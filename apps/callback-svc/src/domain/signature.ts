import { Webhook } from 'standardwebhooks';

// One Webhook per secret: constructing it decodes the secret, which is wasted work on every attempt.
const signers = new Map<string, Webhook>();

/** Standard Webhooks headers for one attempt: the signature covers "id.timestamp.body". */
export function signedHeaders(secret: string, eventId: string, body: string, at: Date): Record<string, string> {
  let signer = signers.get(secret);
  if (!signer) {
    if (signers.size > 10_000) signers.clear();
    signer = new Webhook(secret);
    signers.set(secret, signer);
  }
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signer.sign(eventId, at, body),
  };
}
