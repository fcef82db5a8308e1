import type { TLSSocket } from 'node:tls';
import Koa, { type Context, type Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import type { Logger } from '@payments/logger';
import type { Behaviour } from '../../domain/behaviour';
import { INTER_ENDPOINT_LIMITS, type CallMeter, type InterEndpoint } from '../../domain/inter/call-meter';
import type { InterBank } from '../../domain/inter/inter-bank';
import { sameAccount } from '../../domain/inter/rules';

/** What the Inter dialect's and the PIX API's apps are both given. */
export interface DialectApiDeps {
  /** The sandbox's behaviour mode: "down" answers 503, "reject" refuses creates, "slow" delays them. */
  behaviour: Behaviour;
  /** How long a create waits in behaviour mode slow (BANK_SANDBOX_SLOW_MS). */
  slowMs: number;
  meter: CallMeter;
  /** Refuse calls beyond Inter's production limits (BANK_SANDBOX_INTER_ENFORCE_LIMITS). */
  enforceLimits: boolean;
  /** Accept http:// webhook URLs (development). */
  httpWebhooks: boolean;
  logger: Logger;
}

/** How a dialect refuses a call, in its own words. */
export interface Refusals {
  unauthorized(detail: string): Error;
  accessDenied(): Error;
  tooManyRequests(limit: number, retryAfterSeconds: number): Error;
}

/** What the Inter dialect and the PIX API check their calls against (the same integrations, faults and meter). */
export interface CallGate {
  bank: InterBank;
  meter: CallMeter;
  /** Refuse calls beyond Inter's production limits (BANK_SANDBOX_INTER_ENFORCE_LIMITS). */
  enforceLimits: boolean;
  refusals: Refusals;
}

/**
 * The front of the Inter dialect's and the PIX API's apps, before their routes: the dialect's error
 * answers, 503 while the sandbox's behaviour is "down", and JSON or form bodies.
 */
export function dialectApp(errorHandler: Middleware, behaviour: Behaviour, unavailable: () => Error): Koa {
  const app = new Koa();
  app.use(errorHandler);
  app.use(async (_ctx, next) => {
    if (behaviour.mode === 'down') throw unavailable();
    await next();
  });
  app.use(bodyParser({ enableTypes: ['json', 'form'], strict: true, jsonLimit: '1mb', formLimit: '16kb' }));
  return app;
}

/** The body parsed by dialectApp's parser, as sent (to be checked against the dialect's schemas). */
export function body(ctx: Context): unknown {
  return (ctx.request as { body?: unknown }).body;
}

/** SHA-256 fingerprint of the client certificate of this connection (mutual TLS guarantees there is one). */
export function certFingerprint(ctx: Context, refusals: Refusals): string {
  const cert = (ctx.req.socket as TLSSocket).getPeerCertificate?.();
  if (!cert || !cert.fingerprint256) throw refusals.unauthorized('certificado de cliente ausente');
  return cert.fingerprint256;
}

/** Counts the call; 429 with Retry-After beyond the limit in force (the rate-limit fault, or Inter's own). */
export function meter(gate: CallGate, clientId: string, endpoint: InterEndpoint): void {
  const limits = [gate.bank.faults.rate_limit_per_minute, gate.enforceLimits ? INTER_ENDPOINT_LIMITS[endpoint] : null];
  const given = limits.filter((l): l is number => l !== null);
  const limit = given.length > 0 ? Math.min(...given) : null;
  const admission = gate.meter.admit(clientId, endpoint, limit);
  if (!admission.admitted) throw gate.refusals.tooManyRequests(admission.limit, admission.retryAfterSeconds);
}

/**
 * The client of a bearer token of this client certificate with the scope the operation needs (and, when
 * `checkAccount`, for the account named by x-conta-corrente when sent); the call is counted against the
 * limit in force.
 */
export async function authorizedClient(
  ctx: Context,
  gate: CallGate,
  scope: string,
  endpoint: InterEndpoint,
  checkAccount: boolean,
): Promise<{ clientId: string; scopes: string[]; account: string }> {
  const token = /^Bearer (\S+)$/i.exec(ctx.get('authorization'))?.[1];
  const client = token ? await gate.bank.authenticate(token, certFingerprint(ctx, gate.refusals)) : null;
  if (!client) throw gate.refusals.unauthorized('token ausente, inválido ou expirado');
  meter(gate, client.clientId, endpoint);
  if (!client.scopes.includes(scope)) throw gate.refusals.accessDenied();
  const account = ctx.get('x-conta-corrente');
  if (checkAccount && account !== '' && !sameAccount(account, client.account)) throw gate.refusals.accessDenied();
  return client;
}
