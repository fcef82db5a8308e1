/** @jsxRuntime automatic @jsxImportSource preact */
import { render } from 'preact-render-to-string';
import type { DeliveryHealth, RegistrationHealth } from '@payments/contracts';
import { formatsFor } from '../src/views/locale';

const { age } = formatsFor('pt-BR');
import type { PageContext } from '../src/operator/pages/frame';
import { HealthPage } from '../src/operator/pages/health';

/*
 * The operator's health page shows the charges waiting for their bank: per bank account,
 * how many wait, how many are stuck, the oldest one's age and the bank's last answer, as text.
 */

const HOSTILE = '<img src=x onerror=alert(1)>';
const ESCAPED = '&lt;img src=x onerror=alert(1)>';
const page: PageContext = {
  session: { role: 'operator', sessionId: `ses_${'a'.repeat(43)}`, user: null, expiresAt: '2026-11-28T20:00:00Z' },
  flash: [],
  path: '/operator/health',
};
const deliveries: DeliveryHealth = {
  window: 'hour',
  from: '2026-11-26T08:00:00.000Z',
  to: '2026-11-26T09:00:00.000Z',
  tenants: [],
  hosts: [],
};
const tenantId = '7b0f3c8e-2d1a-4c55-9f6e-0a1b2c3d4e5f';

it('each bank account with charges waiting: counts, oldest age, attempts and the bank’s last error as text', () => {
  const registrations: RegistrationHealth = {
    at: '2026-11-26T09:00:00.000Z',
    stuck_after_seconds: 300,
    accounts: [
      {
        tenant_id: tenantId,
        tenant_name: HOSTILE,
        provider: 'inter',
        account_key: 'k1',
        base_url: 'https://cdpj.partners.bancointer.com.br',
        waiting: 12,
        stuck: 7,
        oldest_since: '2026-11-26T06:55:00.000Z',
        oldest_age_seconds: 7500,
        attempts: 9,
        last_error: `the bank did not answer: ${HOSTILE}`,
        last_attempt_at: '2026-11-26T08:59:30.000Z',
      },
      {
        tenant_id: tenantId,
        tenant_name: 'Escola',
        provider: 'sandbox',
        account_key: 'k2',
        base_url: null,
        waiting: 1,
        stuck: 0,
        oldest_since: '2026-11-26T08:59:50.000Z',
        oldest_age_seconds: 10,
        attempts: 0,
        last_error: null,
        last_attempt_at: null,
      },
    ],
  };
  const html = render(<HealthPage page={page} window="hour" health={deliveries} registrations={registrations} />);
  expect(html).not.toContain('<img');
  expect(html).toContain('Cobranças esperando um banco');
  expect(html).toContain(`<span class="error-text last-error">the bank did not answer: ${ESCAPED}</span>`);
  expect(html).toContain(`>${ESCAPED}</a>`);
  expect(html).toMatch(/<td class="num waiting">12<\/td><td class="num stuck">7<\/td>/);
  expect(html).toContain('>2 h 05 min<');
  expect(html).toContain('>10 s<');
  expect(html).toContain('<td class="num attempts">9</td>');
  // Stuck accounts stand out; the one only just waiting does not.
  expect(html.match(/data-provider="inter" class="health-bad"/g)).toHaveLength(1);
  expect(html).toMatch(/data-provider="sandbox">/);
  expect(html).toContain('raiz da API padrão');
  expect(html).toContain('esperando há mais de 5 min');
});

it('no charge waiting: says so', () => {
  const html = render(
    <HealthPage
      page={page}
      window="hour"
      health={deliveries}
      registrations={{ at: '2026-11-26T09:00:00.000Z', stuck_after_seconds: 300, accounts: [] }}
    />,
  );
  expect(html).toContain('Nenhuma cobrança esperando o seu banco');
  expect(html).not.toContain('health-waiting');
});

it('ages read as an operator says them', () => {
  expect([age(0), age(59), age(60), age(3599), age(3600), age(7500), age(172_799), age(172_800 + 3 * 3600)]).toEqual([
    '0 s',
    '59 s',
    '1 min',
    '59 min',
    '1 h 00 min',
    '2 h 05 min',
    '47 h 59 min',
    '2 d 3 h',
  ]);
});
