import type { Context } from 'koa';
import { ConsoleError } from './errors';

/** The largest form the console takes: its forms hold a few short fields. */
const FORM_LIMIT_BYTES = 16 * 1024;

/** An application/x-www-form-urlencoded POST body. */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  const type = ctx.get('content-type').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new ConsoleError(415, 'send the form as application/x-www-form-urlencoded');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT_BYTES) throw new ConsoleError(413, `a form may hold at most ${FORM_LIMIT_BYTES} bytes`);
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** A query or form value given at most once, trimmed; undefined when absent or empty. */
export function single(value: string | string[] | null | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  const trimmed = v?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
