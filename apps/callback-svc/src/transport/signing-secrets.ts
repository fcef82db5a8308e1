import type { Bus } from '@payments/bus';
import { Subjects } from '@payments/contracts';
import type { SigningSecrets } from '../domain/delivery-engine';

/** Asks the gateway (owner of tenants) for signing secrets, remembering them for a few minutes. */
export class BusSigningSecrets implements SigningSecrets {
  private readonly cache = new Map<string, { secret: string; until: number }>();

  constructor(
    private readonly bus: Bus,
    private readonly ttlMs = 5 * 60_000,
  ) {}

  async secretFor(tenantId: string): Promise<string> {
    const hit = this.cache.get(tenantId);
    if (hit && hit.until > Date.now()) return hit.secret;
    const reply = await this.bus.request(
      Subjects.tenants.signingSecret,
      { tenant_id: tenantId },
      { service: 'gateway', timeoutMs: 5_000 },
    );
    this.cache.set(tenantId, { secret: reply.signing_secret, until: Date.now() + this.ttlMs });
    return reply.signing_secret;
  }
}
