import type { EventStatus } from '../db/schema';

/** A trace context as propagation headers (W3C traceparent, tracestate), stored with an event. */
export type TraceContext = Record<string, string>;

/** A notification to deliver to a tenant's URL, as the producers hand it over. */
export interface NewCallbackEvent {
  eventId: string;
  tenantId: string;
  eventType: string;
  url: string;
  /** Serialised once: every attempt sends and signs these exact bytes. */
  body: string;
  /** Trace context of the consumed callback request, kept with the event for its delivery attempts. */
  traceContext?: TraceContext;
  /** The charge a receivable's callback is about, for the list's receivable_id filter (a UUID). */
  receivableId?: string | null;
}

/** An event claimed for delivery by this worker. */
export interface ClaimedEvent {
  eventId: string;
  tenantId: string;
  url: string;
  targetHost: string;
  body: string;
  failuresInRun: number;
  /** The claim's fencing token: the outcome is written only while the row still carries it. */
  leaseToken: string;
  /** Trace context stored with the event (null: none); each attempt is traced as its child. */
  traceContext: TraceContext | null;
}

export interface AttemptView {
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The start of the receiver's answer (storableExcerpt); null when none came or it was empty. */
  responseExcerpt: string | null;
}

export interface EventView {
  eventId: string;
  eventType: string;
  url: string;
  status: EventStatus;
  createdAt: Date;
  deliveredAt: Date | null;
  attemptCount: number;
  nextAttemptAt: Date | null;
  attempts?: AttemptView[];
  /** The body sent on every attempt; only the detail (find) reads it, the list leaves it out. */
  body?: string;
}

/**
 * The payload of an event, as the visibility API shows it: its stored body (the exact bytes sent)
 * parsed. Producers always send a JSON object; anything else (a row written some other way) is null
 * rather than a failed request.
 */
export function payloadOf(body: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

export function targetHostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return '';
  }
}
