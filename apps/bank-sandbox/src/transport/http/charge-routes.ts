import { createHash, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import stableStringify from 'fast-json-stable-stringify';
import { planRegistration } from '../../domain/behaviour';
import { payeeFor } from '../../domain/beneficiary';
import type { ChargeOrder } from '../../db/charge-store';
import { renderChargePdf } from '../../domain/slip-pdf';
import { chargeQrPng } from '../../domain/payment-images';
import type { LedgerCharge } from '../../domain/charge';
import { isUuid } from '../../domain/uuid';
import { parseChargeRequest, type FieldProblem } from './charge-request';
import type { SandboxDeps } from './context';
import { BankApiError } from './errors';
import { chargeResponse } from './wire';

const MAX_BATCH = 500;

/**
 * The bank-like charge API: register (idempotent by Idempotency-Key), read, cancel, all behind
 * `Authorization: Bearer <api key>`; the PDF and QR-code image are public (their links go to ERPs).
 */
export function mountChargeRoutes(router: Router, deps: SandboxDeps): void {
  const auth = requireApiKey(deps.apiKey);

  router.post('/v1/charges', auth, (ctx) => registerCharge(ctx, deps));

  /**
   * Batch registration: `{ charges: [{ idempotency_key, ...the body of POST /v1/charges }] }`, at most
   * 500. Answers 200 with one result per charge, in order: `{ status, charge }` (201 new, 200 replay)
   * or `{ status, error }` (422 invalid or rejected, 503 could not be processed now). A bank that is
   * down answers 503 to the whole batch.
   */
  router.post('/v1/charges/batch', auth, async (ctx) => {
    const body = (ctx.request as { body?: { charges?: unknown } }).body;
    const items = Array.isArray(body?.charges) ? (body.charges as Array<Record<string, unknown>>) : null;
    if (!items || items.length === 0 || items.length > MAX_BATCH)
      throw new BankApiError(422, 'invalid_request', `send { charges: [...] } with 1 to ${MAX_BATCH} charges`);
    if (deps.behaviour.mode === 'down') {
      throw new BankApiError(503, 'unavailable', 'the bank could not process the registration now; try again later');
    }
    ctx.body = { results: await registerBatch(deps, items) };
  });

  router.get('/v1/charges/:chargeId', auth, async (ctx) => {
    ctx.body = chargeResponse(await findCharge(deps, ctx.params.chargeId), deps.publicUrl());
  });

  router.post('/v1/charges/:chargeId/cancel', auth, async (ctx) => {
    const result = isUuid(ctx.params.chargeId)
      ? await deps.store.cancel(ctx.params.chargeId.toLowerCase())
      : ({ outcome: 'not_found' } as const);
    if (result.outcome === 'not_found') throw chargeNotFound(ctx.params.chargeId);
    if (result.outcome === 'not_open')
      throw new BankApiError(
        409,
        'charge_not_open',
        `charge ${result.charge.chargeId} is ${result.charge.status}: it cannot be cancelled`,
      );
    ctx.body = chargeResponse(result.charge, deps.publicUrl());
  });

  router.get('/v1/charges/:chargeId/pdf', async (ctx) => {
    const charge = await findCharge(deps, ctx.params.chargeId);
    ctx.type = 'application/pdf';
    ctx.set('content-disposition', `inline; filename="charge-${charge.ourNumber}.pdf"`);
    ctx.body = await renderChargePdf(charge, payeeFor(deps.payee, charge.beneficiary));
  });

  router.get('/v1/charges/:chargeId/qrcode.png', async (ctx) => {
    const charge = await findCharge(deps, ctx.params.chargeId);
    ctx.type = 'image/png';
    ctx.body = chargeQrPng(charge.pixCopyAndPaste);
  });
}

/** POST /v1/charges: one charge, 201 when new, 200 (Idempotent-Replayed) when its key was seen with the same body. */
async function registerCharge(ctx: Context, deps: SandboxDeps): Promise<void> {
  const key = ctx.get('idempotency-key').trim();
  if (!key || key.length > 255)
    throw new BankApiError(422, 'invalid_request', 'send an Idempotency-Key header of 1 to 255 characters');
  const body: unknown = (ctx.request as { body?: unknown }).body;
  const parsed = parseChargeRequest(body);
  if (!parsed.ok) throw new BankApiError(422, 'invalid_request', problemsText(parsed.problems), parsed.problems);
  const fingerprint = fingerprintOf(body);
  const plan = planRegistration(deps.behaviour.mode, parsed.terms.payer.name);
  const answer = async (status: number, charge: LedgerCharge, replayed: boolean) => {
    if (plan.slow) await sleep(deps.slowMs);
    ctx.status = status;
    if (replayed) ctx.set('idempotent-replayed', 'true');
    ctx.body = chargeResponse(charge, deps.publicUrl());
  };

  // A key already used stands for what it did then, whatever the bank's mood now.
  const earlier = await deps.store.lookupIdempotencyKey(key, fingerprint);
  if (earlier?.outcome === 'key_reused') throw keyReused();
  if (earlier) return answer(200, earlier.charge, true);

  if (plan.outcome !== 'accept') {
    if (plan.slow) await sleep(deps.slowMs);
    if (plan.outcome === 'fail')
      throw new BankApiError(503, 'unavailable', 'the bank could not process the registration now; try again later');
    throw new BankApiError(422, 'charge_rejected', 'the bank refused to register this charge');
  }
  const registered = await deps.store.register(key, fingerprint, { terms: parsed.terms, owner: parsed.owner });
  if (registered.outcome === 'key_reused') throw keyReused();
  if (registered.outcome === 'created')
    deps.logger.debug(
      { chargeId: registered.charge.chargeId, ourNumber: registered.charge.ourNumber, kind: registered.charge.kind },
      'charge registered',
    );
  return answer(registered.outcome === 'created' ? 201 : 200, registered.charge, registered.outcome === 'replayed');
}

/** One charge's result in a batch answer. */
interface BatchResult {
  status: number;
  charge?: ReturnType<typeof chargeResponse>;
  error?: { code: string; message: string };
}

/** A batch item to register: where its result goes, its key, and the order with its fingerprint. */
interface AcceptedItem {
  index: number;
  key: string;
  fingerprint: string;
  order: ChargeOrder;
}

/**
 * The batch's results, in order: items that are invalid, rejected or failed by the bank's mood are
 * answered at once; the others are registered together. The answer waits once if any item was slow.
 */
async function registerBatch(deps: SandboxDeps, items: Array<Record<string, unknown>>): Promise<BatchResult[]> {
  const results: BatchResult[] = new Array(items.length);
  const accepted: AcceptedItem[] = [];
  let slow = false;
  items.forEach((item, index) => {
    const checked = checkBatchItem(item ?? {}, deps);
    slow ||= checked.slow;
    if ('result' in checked) results[index] = checked.result;
    else accepted.push({ index, ...checked.accepted });
  });
  const outcomes = await deps.store.registerMany(accepted);
  outcomes.forEach((outcome, i) => {
    results[accepted[i].index] =
      outcome.outcome === 'key_reused'
        ? batchError(422, 'idempotency_key_reused', 'this idempotency_key was used with another charge')
        : {
            status: outcome.outcome === 'created' ? 201 : 200,
            charge: chargeResponse(outcome.charge, deps.publicUrl()),
          };
  });
  if (slow) await sleep(deps.slowMs);
  return results;
}

type CheckedItem = { slow: boolean; result: BatchResult } | { slow: boolean; accepted: Omit<AcceptedItem, 'index'> };

/** A batch item's key and body checked, and what the bank's mood (or a marker in the payer's name) makes of it. */
function checkBatchItem(item: Record<string, unknown>, deps: SandboxDeps): CheckedItem {
  const { idempotency_key: key, ...charge } = item;
  if (typeof key !== 'string' || key.trim() === '' || key.length > 255)
    return { slow: false, result: batchError(422, 'invalid_request', 'idempotency_key must be 1 to 255 characters') };
  const parsed = parseChargeRequest(charge);
  if (!parsed.ok) return { slow: false, result: batchError(422, 'invalid_request', problemsText(parsed.problems)) };
  const plan = planRegistration(deps.behaviour.mode, parsed.terms.payer.name);
  if (plan.outcome === 'fail')
    return {
      slow: plan.slow,
      result: batchError(503, 'unavailable', 'the bank could not process this registration now'),
    };
  if (plan.outcome === 'reject')
    return { slow: plan.slow, result: batchError(422, 'charge_rejected', 'the bank refused to register this charge') };
  return {
    slow: plan.slow,
    accepted: { key, fingerprint: fingerprintOf(charge), order: { terms: parsed.terms, owner: parsed.owner } },
  };
}

function batchError(status: number, code: string, message: string): BatchResult {
  return { status, error: { code, message } };
}

/** What makes two requests with the same key the same request: a hash of the body, keys sorted. */
function fingerprintOf(body: unknown): string {
  return createHash('sha256').update(stableStringify(body)).digest('hex');
}

function problemsText(problems: FieldProblem[]): string {
  return problems.map((p) => `${p.path} ${p.message}`).join('; ');
}

async function findCharge(deps: SandboxDeps, chargeId: string): Promise<LedgerCharge> {
  const charge = isUuid(chargeId) ? await deps.store.get(chargeId.toLowerCase()) : null;
  if (!charge) throw chargeNotFound(chargeId);
  return charge;
}

function chargeNotFound(chargeId: string): BankApiError {
  return new BankApiError(404, 'not_found', `no charge ${chargeId}`);
}

function keyReused(): BankApiError {
  return new BankApiError(
    422,
    'idempotency_key_reused',
    'this Idempotency-Key was already used with a different request',
  );
}

/** `Authorization: Bearer <api key>`, compared in constant time. */
function requireApiKey(apiKey: string) {
  const expected = createHash('sha256').update(apiKey).digest();
  return async (ctx: Context, next: Next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    const given = match ? createHash('sha256').update(match[1]).digest() : null;
    if (!given || !timingSafeEqual(given, expected))
      throw new BankApiError(401, 'unauthorized', 'send Authorization: Bearer <api key>');
    await next();
  };
}
