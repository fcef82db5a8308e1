import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { ErrorPage } from '../src/views/error-page';
import { CallbackPage } from '../src/tenant/pages/callback';
import { ChargesPage } from '../src/tenant/pages/charges';
import type { TenantSession } from '../src/session/session';

const XSS = '<img src=x onerror=alert(1)>';
const session: TenantSession = {
  role: 'tenant',
  jwt: 'header.payload.signature',
  tenantId: '7f0c1a52-0000-4000-8000-000000000001',
  tenantRole: 'tenant_viewer',
  tenantName: null,
  sessionId: `ses_${'a'.repeat(43)}`,
  user: null,
  expiresAt: '2026-11-28T20:00:00Z',
};

/** No element made of the attacker's text: the only <img would be its own. */
function expectInert(html: string): void {
  expect(html).not.toContain('<img');
  expect(html).not.toMatch(/<[^>]+\sonerror=/i);
  expect(html).toContain('&lt;img src=x onerror=alert(1)>');
}

describe('attacker-controlled text is rendered as text', () => {
  it('a payer name in the charges list', () => {
    const html = renderToString(
      h(ChargesPage, {
        session,
        flash: [],
        path: '/tenant/charges',
        filters: { state: 'all', from: '2026-11-01', to: '2026-11-30' },
        items: [
          {
            accounts_receivable_id: '00000000-0000-4000-8000-000000000001',
            client_name: XSS,
            status_payment: 'Pendente',
            paymento_type: 'naodefinido',
            payment_date: null,
            amount_due: 10,
            amount_paid: 0,
            fee_amount: 0,
          },
        ],
      }),
    );
    expectInert(html);
  });

  it("a receiver's error, a URL and an event id in a callback's attempts", () => {
    const html = renderToString(
      h(CallbackPage, {
        session,
        flash: [{ kind: 'error', text: XSS }],
        path: '/tenant/callbacks/x',
        event: {
          event_id: 'evt_1',
          event_type: 'receivable.registered',
          url: `https://erp.example.com/cb?q="${XSS}`,
          status: 'dead',
          created_at: '2026-11-26T09:00:00Z',
          delivered_at: null,
          attempts: [
            {
              attempted_at: '2026-11-26T09:00:01Z',
              status_code: 500,
              error: XSS,
              duration_ms: 12,
              response_excerpt: `</pre>${XSS}`,
            },
            {
              attempted_at: '2026-11-26T09:00:02Z',
              status_code: null,
              error: 'x',
              duration_ms: 1,
              response_excerpt: null,
            },
          ],
          payload: { payer_name: XSS },
        },
      }),
    );
    expectInert(html);
    expect(html).toContain('&quot;'); // the quote in the URL stays inside its text
    // The receiver's answer, closing tag and all, is the text of its own <pre>; none for no answer.
    expect(html).toContain('<pre class="mono excerpt">&lt;/pre>&lt;img src=x onerror=alert(1)></pre>');
    expect(html.match(/<pre class="mono excerpt">/g)).toHaveLength(1);
  });

  it("a gateway problem's detail and fields on the error page", () => {
    const html = renderToString(
      h(ErrorPage, {
        status: 400,
        title: XSS,
        problem: { status: 400, detail: XSS, errors: [{ path: XSS, message: XSS }] },
      }),
    );
    expectInert(html);
  });

  it('the session JWT is never part of a page', () => {
    const html = renderToString(
      h(ChargesPage, {
        session,
        flash: [],
        path: '/tenant/charges',
        filters: { state: 'all', from: '2026-11-01', to: '2026-11-30' },
        items: [],
      }),
    );
    expect(html).not.toContain(session.jwt);
    expect(html).toContain(session.tenantId);
  });
});
