import { SLIP_PDF_PATH, SLIP_QRCODE_PATH } from '@payments/contracts';

/** Which of a charge's signed gateway links (docs/api.md, "Providers"). */
export type SlipLinkKind = 'pdf' | 'qrcode';

const SLIP_PATHS: Record<SlipLinkKind, string> = { pdf: SLIP_PDF_PATH, qrcode: SLIP_QRCODE_PATH };

/**
 * A payment_data link (`pdf` or `qrcode_image`) when it is one of this gateway's signed slip links
 * (downloadSlipPdf / downloadSlipQrCode, as Inter and PIX banks' charges carry), re-based on
 * GATEWAY_URL: the console streams those and fetches no other address. Undefined for anything else,
 * such as a bank's own public link (the sandbox's), which the page links to directly.
 */
export function gatewaySlipLink(text: string, kind: SlipLinkKind, gatewayUrl: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const prefix = `${SLIP_PATHS[kind]}/`;
  const id = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : '';
  const expires = url.searchParams.get('expires');
  const signature = url.searchParams.get('signature');
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(id) || !expires || !signature) return undefined;
  const link = new URL(`${gatewayUrl}${prefix}${id}`);
  link.searchParams.set('expires', expires);
  link.searchParams.set('signature', signature);
  return link;
}

/** An http(s) link a page may point the browser at, or undefined (empty, or another scheme). */
export function webLink(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

const DAY_MS = 86_400_000;
const FACTOR_BASE = Date.UTC(1997, 9, 7);
const FACTOR_RESET = Date.UTC(2025, 1, 22);

/**
 * The due date a bank slip's 44-digit barcode carries (FEBRABAN: digits 6-9 are days since
 * 1997-10-07; from 2025-02-22 they restart at 1000 and wrap every 9,000 days), as YYYY-MM-DD: of the
 * dates the factor can stand for, the one nearest to `now`. The public API answers no due date of a
 * charge (consult keeps the specification's shape), so a slip's page reads the bank's own. Undefined
 * for a PIX charge (no barcode) and for factor 0000 (a slip without due date).
 */
export function dueDateOfBarcode(barcode: string, now: number): string | undefined {
  if (!/^\d{44}$/.test(barcode)) return undefined;
  const factor = Number(barcode.slice(5, 9));
  if (factor === 0) return undefined;
  const candidates = [FACTOR_BASE + factor * DAY_MS];
  if (factor >= 1000) {
    const first = FACTOR_RESET + (factor - 1000) * DAY_MS;
    for (let k = 0; k < 4; k++) candidates.push(first + k * 9000 * DAY_MS);
  }
  const nearest = candidates.reduce((a, b) => (Math.abs(b - now) < Math.abs(a - now) ? b : a));
  return new Date(nearest).toISOString().slice(0, 10);
}
