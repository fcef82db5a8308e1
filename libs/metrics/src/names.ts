/**
 * Every metric name of the system, in one place: apps register them from here, dashboards and
 * tests read them from here.
 */
export const MetricNames = {
  /** Counter {method, route, status}: HTTP requests answered, by route template (never the raw path). */
  httpRequests: 'http_requests_total',
  /** Histogram {method, route, status}: time to answer an HTTP request. */
  httpRequestDuration: 'http_request_duration_seconds',
  /** Gauge {stream}: outbox rows not yet published to JetStream (services with an outbox). */
  outboxWaiting: 'outbox_messages_waiting',
  /** Gauge {state}: receivables-svc's charges by state, counted at scrape time. */
  chargesByState: 'receivables_charges_by_state',
  /** Histogram: from a receivable's creation to its registration with the provider. */
  registrationLatency: 'receivables_registration_latency_seconds',
  /** Gauge {provider}: charges waiting longer than 5 minutes for their bank to take them (queued rows only). */
  registrationsStuck: 'receivables_registrations_stuck',
  /** Gauge {provider}: age of the charge waiting longest for its bank, seconds (0: none waiting). */
  registrationOldestWait: 'receivables_registration_oldest_wait_seconds',
  /** Counter: payments the provider reported for charges it had cancelled or rejected (an operator decides on a refund). */
  paymentsNeedingRefund: 'receivables_payments_needing_refund_total',
  /** Counter {direction}: payments recorded with an amount below or above the amount due (direction below | above). */
  paymentsOffAmount: 'receivables_payments_off_amount_total',
  /** Counter: bank notices naming a charge not known (yet): kept and retried, counted once per notice. */
  noticesUnknownCharge: 'receivables_bank_notices_unknown_charge_total',
  /** Gauge: bank notices stored and not applied yet (waiting for their charge or for the bank). */
  noticesWaiting: 'receivables_bank_notices_waiting',
  /** Counter {kind}: changes only reconciliation brought (kind paid | cancelled): what the notices missed. */
  reconciliationFound: 'receivables_reconciliation_found_total',
  /** Gauge: seconds since the last complete reconciliation sweep of the bank account that waited longest. */
  reconciliationLag: 'receivables_reconciliation_lag_seconds',
  /** Counter {endpoint, reason}: bank calls that waited for their shared per-minute budget (reason budget | blocked). */
  bankCallsWaited: 'receivables_bank_calls_waited_total',
  /** Counter {endpoint}: bank calls answered 429 (every instance then waits the Retry-After). */
  bankRateLimited: 'receivables_bank_rate_limited_total',
  /** Counter {endpoint}: bank calls answered 403 (retried after a growing delay; operators look at the account). */
  bankForbidden: 'receivables_bank_forbidden_total',
  /** Counter: bank webhooks left pointing at another URL (no --replace-webhook); reconciliation finds payments. */
  bankWebhookConflicts: 'receivables_bank_webhook_conflicts_total',
  /** Counter {outcome}: callback delivery attempts; outcome delivered | failed (will be retried) | dead (last attempt failed). */
  callbackAttempts: 'callback_attempts_total',
  /** Counter: callbacks that ran out of attempts. */
  callbacksDead: 'callback_dead_total',
  /** Gauge: callback deliveries waiting (pending: due now or scheduled for a retry). */
  callbackDeliveriesWaiting: 'callback_deliveries_waiting',
  /** Gauge: claimed callback events this worker holds in memory, waiting for a slot or in flight. */
  callbackDeliveriesHeld: 'callback_deliveries_held',
  /** Gauge: receiving hosts this worker remembers as failing (bounded: 10,000, each 10 min after its last failure). */
  callbackFailingHosts: 'callback_failing_hosts',
  /** Counter {stream}: job messages dead-lettered (failed JOB_MAX_FAILURES times, or poison). */
  jobsDeadLettered: 'jobs_dead_lettered_total',
  /** Gauge {stream}: a JetStream stream's bytes over its max_bytes (STREAM_MAX_BYTES), 0..1. */
  streamFillRatio: 'jetstream_stream_fill_ratio',
  /** Gauge: outbox rows not yet published, all streams. */
  outboxRows: 'outbox_rows',
  /** Gauge: outbox rows whose last publish failed, waiting for their next attempt. */
  outboxFailingRows: 'outbox_failing_rows',
  /** Gauge: age of the oldest outbox row, seconds. */
  outboxOldestAge: 'outbox_oldest_age_seconds',
  /** Gauge: outbox rows over OUTBOX_MAX_ROWS. */
  outboxFillRatio: 'outbox_fill_ratio',
  /** Counter: Postgres statements this process sent (each one round trip), BEGIN and COMMIT included. */
  dbStatements: 'db_statements_total',
  /** Counter: Postgres commits this process asked for: each COMMIT, and each statement run outside a transaction. */
  dbCommits: 'db_commits_total',
  /** Counter: bus requests (request-reply) this process sent. */
  busRequests: 'bus_requests_sent_total',
  /** Counter: seconds this process's bus requests waited for their replies, summed. */
  busRequestSeconds: 'bus_request_wait_seconds_total',
  /** Counter: bus requests this process served (answered or refused). */
  busServed: 'bus_requests_served_total',
  /** Counter: seconds from a served request's arrival to its reply (a wait for a handler slot included), summed. */
  busServeSeconds: 'bus_serve_seconds_total',
  /** Counter: messages this process published to JetStream (outbox relay, retries and dead letters included). */
  busPublishes: 'bus_publishes_total',
  /** Counter: claim-checked request or reply bodies this process refused (object missing, or its digest not the message's): poison. */
  busClaimsRefused: 'bus_claims_refused_total',
  /** Counter: outgoing HTTP requests this process started (fetch, undici and node:http). */
  httpClientRequests: 'http_client_requests_total',
} as const;

export type MetricName = (typeof MetricNames)[keyof typeof MetricNames];
