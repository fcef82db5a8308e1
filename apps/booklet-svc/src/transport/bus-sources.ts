import type { Bus } from '@payments/bus';
import { Subjects, type InstallmentsReply } from '@payments/contracts';
import type { InstallmentSource } from '../domain/ports';

/** Installments and their payee from receivables-svc, and the tenant's name from the gateway, over NATS. */
export class BusInstallmentSource implements InstallmentSource {
  constructor(private readonly bus: Bus) {}

  async installments(tenantId: string, paymentSlipId: string): Promise<InstallmentsReply> {
    return this.bus.request(
      Subjects.receivables.installments,
      { tenant_id: tenantId, payment_slip_id: paymentSlipId },
      { service: 'receivables' },
    );
  }

  async payeeName(tenantId: string): Promise<string> {
    const reply = await this.bus.request(Subjects.tenants.profile, { tenant_id: tenantId }, { service: 'gateway' });
    return reply.name;
  }
}
