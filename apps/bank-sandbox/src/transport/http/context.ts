import type { ReadinessCheck } from '@payments/health';
import type { Logger } from '@payments/logger';
import type { Registry } from '@payments/metrics';
import type { Behaviour } from '../../domain/behaviour';
import type { ChargeStore } from '../../db/charge-store';
import type { PayeeDetails } from '../../domain/slip-pdf';
import type { WebhookDispatcher } from '../../domain/webhook-dispatcher';
import type { Kysely } from 'kysely';
import type { BankSandboxDatabase } from '../../db/schema';

/** What the routes need. publicUrl is a function: with port 0 it is known only once listening. */
export interface SandboxDeps {
  db: Kysely<BankSandboxDatabase>;
  store: ChargeStore;
  behaviour: Behaviour;
  dispatcher: WebhookDispatcher;
  payee: PayeeDetails;
  apiKey: string;
  slowMs: number;
  publicUrl: () => string;
  logger: Logger;
  /** What /readyz looks at: the sandbox's own Postgres (it has no NATS). */
  readiness: ReadinessCheck[];
  metrics: Registry;
}
