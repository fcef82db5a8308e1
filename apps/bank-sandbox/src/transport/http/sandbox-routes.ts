import type Router from '@koa/router';
import { toCarrier } from '@payments/telemetry';
import { BEHAVIOUR_MODES, type BehaviourMode } from '../../domain/behaviour';
import type { LedgerCharge } from '../../domain/charge';
import { paymentAmountCents, type SettlementMethod } from '../../domain/money';
import { OUR_NUMBER_DIGITS } from '../../domain/slip-issuer';
import type { SandboxDeps } from './context';
import { BankApiError } from './errors';
import { chargeResponse } from './wire';

const METHODS: readonly SettlementMethod[] = ['boleto', 'pix', 'manual'];

/**
 * The sandbox controls of docs/api.md, "The bank sandbox" (no authentication; they exist so tests and demos can drive
 * the bank): pay a charge, switch how registrations are answered, and look at a charge's webhooks.
 */
export function mountSandboxRoutes(router: Router, deps: SandboxDeps): void {
  router.post('/sandbox/charges/:ourNumber/pay', async (ctx) => {
    const { method, amountCents } = paymentRequest((ctx.request as { body?: unknown }).body);
    const charge = await pay(deps, ctx.params.ourNumber, method, amountCents);
    ctx.body = chargeResponse(charge, deps.publicUrl());
  });

  router.get('/sandbox/charges/:ourNumber', async (ctx) => {
    const charge = await deps.store.getByOurNumber(ourNumberParam(ctx.params.ourNumber));
    if (!charge) throw new BankApiError(404, 'not_found', `no charge with our_number ${ctx.params.ourNumber}`);
    ctx.body = {
      ...chargeResponse(charge, deps.publicUrl()),
      notifications: await notificationsOf(deps, charge.chargeId),
    };
  });

  router.get('/sandbox/behaviour', (ctx) => {
    ctx.body = { mode: deps.behaviour.mode, slow_ms: deps.slowMs };
  });

  router.post('/sandbox/behaviour', (ctx) => {
    const mode = asObject((ctx.request as { body?: unknown }).body).mode;
    if (typeof mode !== 'string' || !(BEHAVIOUR_MODES as readonly string[]).includes(mode)) {
      throw new BankApiError(422, 'invalid_request', `mode must be one of ${BEHAVIOUR_MODES.join(', ')}`);
    }
    deps.behaviour.set(mode as BehaviourMode);
    deps.logger.info({ mode }, 'sandbox behaviour changed');
    ctx.body = { mode: deps.behaviour.mode, slow_ms: deps.slowMs };
  });
}

/** `{ method, amount? }`: amount in reais, the charge's own amount when absent. */
function paymentRequest(body: unknown): { method: SettlementMethod; amountCents: number | null } {
  const fields = asObject(body);
  const method = fields.method;
  if (typeof method !== 'string' || !(METHODS as readonly string[]).includes(method)) {
    throw new BankApiError(422, 'invalid_request', `method must be one of ${METHODS.join(', ')}`);
  }
  let amountCents: number | null = null;
  if (fields.amount !== undefined && fields.amount !== null) {
    amountCents = typeof fields.amount === 'number' ? paymentAmountCents(fields.amount) : null;
    if (amountCents === null)
      throw new BankApiError(
        422,
        'invalid_request',
        'amount must be a positive number of reais with at most 2 decimals',
      );
  }
  return { method: method as SettlementMethod, amountCents };
}

/** Settles the charge now and wakes the webhook dispatcher; a charge that cannot be paid is a BankApiError. */
async function pay(
  deps: SandboxDeps,
  ourNumber: string,
  method: SettlementMethod,
  amountCents: number | null,
): Promise<LedgerCharge> {
  const result = await deps.store.settle(
    ourNumberParam(ourNumber),
    method,
    amountCents,
    new Date(),
    toCarrier() ?? null,
  );
  switch (result.outcome) {
    case 'not_found':
      throw new BankApiError(404, 'not_found', `no charge with our_number ${ourNumber}`);
    case 'not_open':
      throw new BankApiError(
        409,
        'charge_not_open',
        `charge ${result.charge.ourNumber} is ${result.charge.status}: it cannot be paid`,
      );
    case 'method_not_accepted':
      throw new BankApiError(
        422,
        'payment_method_not_accepted',
        `charge ${result.charge.ourNumber} is a pix charge: it has no slip to pay with method boleto`,
      );
    case 'settled':
      deps.logger.info(
        { chargeId: result.charge.chargeId, ourNumber: result.charge.ourNumber, method, eventId: result.eventId },
        'charge paid',
      );
      deps.dispatcher.wake();
      return result.charge;
  }
}

/** The webhooks of a charge, oldest first, with their delivery state. */
function notificationsOf(deps: SandboxDeps, chargeId: string) {
  return deps.db
    .selectFrom('notifications')
    .select([
      'event_id',
      'event_type',
      'status',
      'attempt_count',
      'next_attempt_at',
      'last_status_code',
      'last_error',
      'created_at',
      'delivered_at',
    ])
    .where('charge_id', '=', chargeId)
    .orderBy('created_at')
    .execute();
}

/** Digits; shorter than 11 is zero-padded, so a demo can type /sandbox/charges/42/pay. */
function ourNumberParam(value: string): string {
  return /^\d{1,11}$/.test(value) ? value.padStart(OUR_NUMBER_DIGITS, '0') : value;
}

function asObject(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
