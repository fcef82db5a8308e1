import type { Bus } from '@payments/bus';
import { SIGNING_SECRET_MAX_AGE_MS, Subjects, type SigningSecretReply } from '@payments/contracts';
import type { SigningSecrets } from '../domain/delivery-engine';

interface Known {
  secrets: readonly string[];
  /** performance.now() after which the reply may no longer sign: its request's start plus max_age_ms. */
  until: number;
}

/**
 * Asks the gateway (owner of tenants) for a tenant's signing secrets. A reply signs for at most the
 * max_age_ms it names (SIGNING_SECRET_MAX_AGE_MS or less), counted from when the request was sent:
 * the gateway read the secrets after that, so a rotation committed before the request is in the
 * reply, and one committed later is seen within that time. `tenant rotate-secret` waits as long before
 * it reports, so the next callback after it is signed with the new secret on every instance.
 * Concurrent attempts for one tenant share one request.
 */
export class BusSigningSecrets implements SigningSecrets {
  private readonly known = new Map<string, Known>();
  private readonly asking = new Map<string, { sentAt: number; reply: Promise<Known> }>();

  constructor(
    private readonly bus: Bus,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async secretsFor(tenantId: string): Promise<readonly string[]> {
    const hit = this.known.get(tenantId);
    if (hit && hit.until > this.now()) return hit.secrets;
    if (hit) this.known.delete(tenantId);
    const pending = this.asking.get(tenantId);
    // A request still fresh enough is shared; one sent too long ago could carry a secret since rotated.
    if (pending && pending.sentAt + SIGNING_SECRET_MAX_AGE_MS > this.now()) return (await pending.reply).secrets;
    const sentAt = this.now();
    const reply = this.ask(tenantId, sentAt);
    this.asking.set(tenantId, { sentAt, reply });
    try {
      return (await reply).secrets;
    } finally {
      if (this.asking.get(tenantId)?.reply === reply) this.asking.delete(tenantId);
    }
  }

  private async ask(tenantId: string, sentAt: number): Promise<Known> {
    const reply: Partial<SigningSecretReply> & { signing_secret: string } = await this.bus.request(
      Subjects.tenants.signingSecret,
      { tenant_id: tenantId },
      { service: 'gateway', timeoutMs: 5_000 },
    );
    const secrets = [reply.signing_secret];
    if (reply.previous_signing_secret) secrets.push(reply.previous_signing_secret);
    // A gateway that names no max_age_ms (older than rotations) gets the shortest reuse we allow.
    const maxAge = Math.min(reply.max_age_ms ?? SIGNING_SECRET_MAX_AGE_MS, SIGNING_SECRET_MAX_AGE_MS);
    const known = { secrets, until: sentAt + Math.max(0, maxAge) };
    if (known.until > this.now()) this.known.set(tenantId, known);
    return known;
  }
}
