/** Up to where a string that does not parse as a URL may still name its host and path. */
const QUERY_OR_FRAGMENT = /[?#].*$/s;
/** `scheme://user:password@` at the start: the userinfo part, dropped. */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/**
 * A URL as logs may show it: scheme, host (with its port) and path. The query string, the fragment
 * and the userinfo are dropped, since tenants put tokens and signatures there (`?token=...`), and logs
 * are read by more people, and kept longer, than the URLs themselves. A string that is not a URL is cut
 * the same way, as far as its shape tells.
 */
export function urlForLog(raw: string | URL): string {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    return String(raw).replace(QUERY_OR_FRAGMENT, '').replace(USERINFO, '$1');
  }
  const authority = url.host === '' ? '' : `//${url.host}`;
  return `${url.protocol}${authority}${url.pathname}`;
}
