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
