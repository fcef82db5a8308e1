import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

type Attributes = ReadableSpan['attributes'];

/**
 * Attributes that hold only a query string (the stable HTTP conventions' url.query): dropped whole.
 * A signed download link's query is its credential (expires, signature).
 */
const QUERY_ONLY_KEYS = new Set(['url.query', 'http.query']);

/** An absolute URL with a query or fragment, anywhere in a text (error messages name URLs too). */
const URL_WITH_QUERY = /\b([a-z][a-z0-9+.-]*:\/\/[^\s?#"'<>]*)[?#][^\s"'<>]*/gi;
/** A whole value that is a request target with a query or fragment: `/p?x`, `/p#x` (http.target). */
const TARGET_WITH_QUERY = /^(\/[^\s?#]*)[?#]\S*$/;

/** A CPF or CNPJ written with its punctuation (an unpunctuated one cannot be told from other ids). */
const FORMATTED_TAX_ID = /\b(?:\d{3}\.\d{3}\.\d{3}-\d{2}|\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2})\b/g;

/** A query string or fragment is replaced by this, so that a reader still sees there was one. */
export const QUERY_REDACTED = '?[redacted]';

/**
 * The value with every absolute URL in it (and a value that is a request target) cut before its
 * query string and fragment, and punctuated CPF/CNPJ numbers masked; anything else unchanged.
 */
export function redactValue(value: string): string {
  return value
    .replace(TARGET_WITH_QUERY, `$1${QUERY_REDACTED}`)
    .replace(URL_WITH_QUERY, `$1${QUERY_REDACTED}`)
    .replace(FORMATTED_TAX_ID, '[tax id]');
}

/** Rewrites an attribute map in place: query-only attributes dropped, every string value redacted. */
export function redactAttributes(attributes: Attributes | undefined): void {
  if (!attributes) return;
  for (const [key, value] of Object.entries(attributes)) {
    if (QUERY_ONLY_KEYS.has(key)) delete attributes[key];
    else if (typeof value === 'string') attributes[key] = redactValue(value);
    else if (Array.isArray(value))
      attributes[key] = value.map((item: unknown) => (typeof item === 'string' ? redactValue(item) : item)) as
        string[] | number[] | boolean[];
  }
}

/**
 * First span processor of every app: before any exporter sees a span, strips query strings from its
 * URL attributes (http.url, url.full, http.target...: signed links carry `signature=`), drops
 * url.query, and masks punctuated CPF/CNPJ numbers in attributes, event attributes (exceptions) and
 * the status message. It rewrites what the instrumentations recorded, whichever recorded it, so a
 * new instrumentation or attribute cannot leak a signed link by itself.
 *
 * It must come before the exporting processor: a SimpleSpanProcessor exports inside its onEnd.
 */
export class RedactingSpanProcessor implements SpanProcessor {
  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    redactAttributes(span.attributes);
    for (const event of span.events) redactAttributes(event.attributes);
    for (const link of span.links) redactAttributes(link.attributes);
    if (span.status.message) span.status.message = redactValue(span.status.message);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
