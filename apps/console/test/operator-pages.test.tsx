/** @jsxRuntime automatic @jsxImportSource preact */
import { render } from 'preact-render-to-string';
import type { DeliveryHealth, DeliveryStats, RegistrationStats } from '@payments/contracts';
import type { AdminSchemas } from '../src/operator/admin-client';
import { AuditLogPage } from '../src/operator/pages/audit';
import { DashboardPage } from '../src/operator/pages/dashboard';
import { DeadLetterPage, DeadLettersPage } from '../src/operator/pages/dead-letters';
import type { PageContext } from '../src/operator/pages/frame';
import { HealthPage, rateClass } from '../src/operator/pages/health';
import {
  ConfirmCreateTenantPage,
  ConfirmIssueTokenPage,
  ConfirmRotatePage,
  SecretOncePage,
  TenantPage,
  TenantsPage,
} from '../src/operator/pages/tenants';
import { providerAccountRequest } from '../src/operator/tenant-handlers';

const HOSTILE = '<img src=x onerror=alert(1)>';
const ESCAPED = '&lt;img src=x onerror=alert(1)>';
const page: PageContext = {
  session: { role: 'operator', sessionId: `ses_${'a'.repeat(43)}`, user: null, expiresAt: '2026-11-28T20:00:00Z' },
  flash: [],
  path: '/operator/tenants',
};
const tenant: AdminSchemas['AdminTenant'] = {
  tenant_id: '7b0f3c8e-2d1a-4c55-9f6e-0a1b2c3d4e5f',
  name: HOSTILE,
  status: 'active',
  created_at: '2026-11-26T09:00:00.000Z',
  active_tokens: 1,
  previous_secret_valid_until: null,
};

it('a tenant named like markup is text on the list and on its page; the credential is never on a page', () => {
  for (const html of [
    render(<TenantsPage page={page} tenants={[tenant]} />),
    render(<TenantPage page={page} tenant={tenant} tokens={[]} account={undefined} />),
  ]) {
    expect(html).not.toContain('<img');
    expect(html).toContain(ESCAPED);
    expect(html).not.toContain('opk_x');
    expect(html).not.toMatch(/\sstyle=/);
  }
});

it("a tenant's page: tokens with revoke forms for the active ones, and the actions of an active tenant", () => {
  const tokens: Array<AdminSchemas['AdminToken']> = [
    { token_id: 'a', token_hint: 'itk_abc123', created_at: tenant.created_at, revoked_at: null, last_used_at: null },
    {
      token_id: 'b',
      token_hint: 'itk_def456',
      created_at: tenant.created_at,
      revoked_at: tenant.created_at,
      last_used_at: null,
    },
  ];
  const html = render(<TenantPage page={page} tenant={tenant} tokens={tokens} account={undefined} />);
  expect(html.match(/action="\/operator\/tokens\/[ab]\/revoke"/g)).toEqual(['action="/operator/tokens/a/revoke"']);
  expect(html).toContain(`action="/operator/tenants/${tenant.tenant_id}/disable"`);
  // Issuing and rotating lead to their confirmation pages, not to the actions.
  expect(html).toContain(`<form method="get" action="/operator/tenants/${tenant.tenant_id}/tokens/new"`);
  expect(html).toContain(`<form method="get" action="/operator/tenants/${tenant.tenant_id}/rotate-secret"`);
  expect(html).not.toContain('data-overlap-until');
  // No provider account: the form is unfolded.
  expect(html).toMatch(/<details class="panel" open/);
  const disabled = render(
    <TenantPage page={page} tenant={{ ...tenant, status: 'disabled' }} tokens={tokens} account={undefined} />,
  );
  expect(disabled).not.toContain('/disable"');
  expect(disabled).not.toContain(`/tokens/new"`);
  // While an overlap runs, the page says until when the previous secret is accepted (Brasília time).
  const overlapping = render(
    <TenantPage
      page={page}
      tenant={{ ...tenant, previous_secret_valid_until: '2026-11-29T14:05:00.000Z' }}
      tokens={[]}
      account={undefined}
    />,
  );
  expect(overlapping).toContain(
    'O segredo anterior ainda é aceito até 29/11/2026 11:05 (horário de Brasília): os callbacks levam as duas assinaturas.',
  );
});

it('a pix account shows like the others: provider, PIX API root, credentials set or none, its PIX key', () => {
  const account: AdminSchemas['AdminProviderAccount'] = {
    tenant_id: tenant.tenant_id,
    account_id: '0d4c8a52-6f3e-4b1a-9c2d-7e8f9a0b1c2d',
    provider: 'pix',
    beneficiary: {
      name: 'Escola Horizonte Ltda',
      tax_id: '45.723.174/0001-10',
      city: null,
      pix_key: 'financeiro@horizonte.example',
      agency: null,
      account: null,
      address: null,
    },
    base_url: 'https://pix.bank.example/api/v2',
    credentials: 'set',
    created_at: tenant.created_at,
  };
  const facts = (a: AdminSchemas['AdminProviderAccount']) => {
    const html = render(<TenantPage page={page} tenant={tenant} tokens={[]} account={a} />);
    const start = html.indexOf('<dl class="facts provider-account">');
    return html.slice(start, html.indexOf('</dl>', start));
  };
  const pix = facts(account);
  expect(pix).toContain('<dd>pix<span class="muted"> (a API PIX de um banco: só cobranças PIX)</span></dd>');
  expect(pix).toContain('<dt>Raiz da API PIX</dt><dd class="mono">https://pix.bank.example/api/v2</dd>');
  expect(pix).toContain('<dd class="mono">financeiro@horizonte.example</dd>');
  expect(pix).toContain('<dd>guardadas (nunca mostradas)</dd>');
  expect(facts({ ...account, credentials: 'none' })).toContain('<dt>Credenciais</dt><dd>nenhuma</dd>');
  // An inter account without a PIX key issues slips only, and says so.
  const slipsOnly = facts({ ...account, provider: 'inter', beneficiary: { ...account.beneficiary, pix_key: null } });
  expect(slipsOnly).toContain('<dt>Raiz da API</dt>');
  expect(slipsOnly).toContain('(só boletos: cobranças PIX recebem 422 pix_key_required)');
  expect(pix).not.toContain('só boletos');
});

it('a secret shown once is on its answer page, escaped like all text', () => {
  const html = render(
    <SecretOncePage
      page={page}
      title="Signing secret rotated"
      tenantId={tenant.tenant_id}
      lead="The new secret."
      secrets={[{ label: 'Signing secret', value: 'whsec_<b>', name: 'signing_secret' }]}
    />,
  );
  expect(html).toContain('<dd class="mono" data-secret="signing_secret">whsec_&lt;b></dd>');
  expect(html).toContain('ele é mostrado uma única vez, nunca mais');
});

it('the audit log links its next page with the cursor, keeping the filters and page size; names source and address', () => {
  const html = render(
    <AuditLogPage
      page={page}
      audit={{
        items: [
          {
            id: 7,
            at: '2026-11-26T09:00:00.000Z',
            operator: HOSTILE,
            action: 'tenant.create',
            tenant_id: tenant.tenant_id,
            details: { name: HOSTILE, n: 2, ok: true, none: null },
            source: 'console',
            address: '203.0.113.9',
            request_id: 'req-1',
            user_id: null,
            user_email: 'ana@ops.example',
          },
        ],
        next_cursor: '7',
      }}
      filter={{ tenant_id: tenant.tenant_id, action: 'token.', since: '2026-11-26T08:00' }}
      limit={2}
      paged={true}
    />,
  );
  const filters = `tenant_id=${tenant.tenant_id}&amp;action=token.&amp;since=2026-11-26T08%3A00&amp;limit=2`;
  expect(html).toContain(`href="/operator/audit?${filters}&amp;cursor=7" rel="next">Próxima página (mais antigos)`);
  expect(html).toContain(`href="/operator/audit?${filters}">Primeira página (mais recentes)`);
  expect(html).toContain(`name=${ESCAPED} n=2 ok=true none=null`);
  expect(html).toContain('<td>console</td><td class="mono">203.0.113.9</td>');
  expect(html).toContain(`${ESCAPED} (ana@ops.example)`);
  expect(html).toContain('26/11/2026 06:00 (horário de Brasília)');
  expect(html).toContain('name="since" value="2026-11-26T08:00"');
  expect(html).not.toContain('<img');
  const last = render(
    <AuditLogPage page={page} audit={{ items: [], next_cursor: null }} filter={{}} limit={undefined} paged={false} />,
  );
  expect(last).not.toContain('rel="next"');
  expect(last).toContain('Nada registrado.');
  expect(last).not.toContain('Limpar filtros');
});

const buckets = (n: number, at: (i: number) => Record<string, number | null>) =>
  Array.from({ length: n }, (_, i) => ({ at: new Date(Date.UTC(2026, 10, 28, 12, i)).toISOString(), ...at(i) }));
const deliveryStats: DeliveryStats = {
  window: 'hour',
  bucket_seconds: 60,
  from: '2026-11-28T12:00:00.000Z',
  to: '2026-11-28T13:00:00.000Z',
  series: buckets(60, (i) => ({
    delivered: i % 2,
    failed: 0,
    dead: 0,
    p50_ms: i % 2 ? 40 : null,
    p99_ms: i % 2 ? 90 : null,
    end_to_end_p50_ms: i % 2 ? 1_200 : null,
    end_to_end_p99_ms: i % 2 ? 65_000 : null,
  })) as DeliveryStats['series'],
};
const registrationStats: RegistrationStats = {
  window: 'hour',
  bucket_seconds: 60,
  from: deliveryStats.from,
  to: deliveryStats.to,
  series: buckets(60, () => ({ registered: 1, failed: 0 })) as RegistrationStats['series'],
};

it('the dashboard draws end-to-end latency beside the receivers’ answer time', () => {
  const html = render(
    <DashboardPage
      page={page}
      window="hour"
      tenantId={undefined}
      deliveries={{ ok: true, value: deliveryStats }}
      registrations={{ ok: true, value: registrationStats }}
      tenants={{ ok: true, value: [tenant] }}
    />,
  );
  for (const id of ['deliveries-hour', 'end-to-end-hour', 'latency-hour', 'registrations-hour'])
    expect(html).toContain(`id="${id}"`);
  expect(html).toContain('Latência de entrega, do evento à entrega (p50, p99), última hora');
  expect(html).toContain('Tempo de resposta do receptor (p50, p99), última hora');
  expect(html).toContain('30 entregues, 0 com falha; 0 eventos mortos');
  expect(html).not.toContain('indisponível');
});

it('the dashboard degrades panel by panel: a service that does not answer blanks its panel only', () => {
  const down = { ok: false as const, reason: 'the admin API did not answer in time' };
  const noDeliveries = render(
    <DashboardPage
      page={page}
      window="hour"
      tenantId={tenant.tenant_id}
      deliveries={down}
      registrations={{ ok: true, value: registrationStats }}
      tenants={{ ok: true, value: [tenant] }}
    />,
  );
  expect(noDeliveries).toContain('data-panel="deliveries"');
  expect(noDeliveries).toContain('Estatísticas de entrega (callback-svc): indisponível agora.');
  expect(noDeliveries).toContain('the admin API did not answer in time');
  expect(noDeliveries).not.toContain('id="deliveries-hour"');
  expect(noDeliveries).not.toContain('id="end-to-end-hour"');
  // The rest is drawn: registrations and their totals, the tenant filter with the names.
  expect(noDeliveries).toContain('id="registrations-hour"');
  expect(noDeliveries).toContain('60 registrados, 0 recusados');
  expect(noDeliveries).toContain(ESCAPED);

  const noRegistrationsNorTenants = render(
    <DashboardPage
      page={page}
      window="hour"
      tenantId={tenant.tenant_id}
      deliveries={{ ok: true, value: deliveryStats }}
      registrations={{ ok: false, reason: `receivables-svc did not answer ${HOSTILE}` }}
      tenants={{ ok: false, reason: 'HTTP 503' }}
    />,
  );
  expect(noRegistrationsNorTenants).toContain('data-panel="registrations"');
  expect(noRegistrationsNorTenants).toContain('data-panel="tenants"');
  expect(noRegistrationsNorTenants).toContain('id="end-to-end-hour"');
  expect(noRegistrationsNorTenants).not.toContain('id="registrations-hour"');
  // Without the list, the chosen tenant stays selected by its id; a service's reason is text.
  expect(noRegistrationsNorTenants).toContain(`value="${tenant.tenant_id}" selected`);
  expect(noRegistrationsNorTenants).not.toContain('<img');
});

it('dead letters: a page with a next link, a payload link per row, no clear; the payload shown escaped', () => {
  const letter: AdminSchemas['AdminDeadLetter'] = {
    id: 41,
    stream: 'pay_booklets',
    subject: 'pay.booklets.build',
    msg_id: 'job-41',
    error: HOSTILE,
    failures: 5,
    dead_lettered_at: '2026-11-28T12:00:00.000Z',
    bytes: 30,
  };
  const list = render(<DeadLettersPage page={page} items={[letter]} nextCursor="41" paged={false} />);
  expect(list).toContain('action="/operator/dead-letters/41/redrive"');
  expect(list).toContain('href="/operator/dead-letters/41"');
  expect(list).toContain('href="/operator/dead-letters?cursor=41" rel="next"');
  expect(list).not.toMatch(/clear|limpar/i);
  expect(list).not.toContain('<img');

  const detail = render(
    <DeadLetterPage
      page={page}
      detail={{
        dead_letter: letter,
        payload_encoding: 'utf8',
        payload: `{"name": "${HOSTILE}"}`,
        payload_truncated: false,
      }}
    />,
  );
  expect(detail).toContain(
    `<pre class="payload" data-encoding="utf8">{&quot;name&quot;: &quot;${ESCAPED}&quot;}</pre>`,
  );
  expect(detail).toContain('action="/operator/dead-letters/41/discard"');
  expect(detail).toContain('<input type="checkbox" name="confirm" value="yes" required');
  expect(detail).not.toContain('<img');
});

it("delivery health: a receiver's error and a tenant's name are text; rows tinted by success rate", () => {
  const fields = { delivered: 1, failed: 9, dead: 2, success_rate: 0.1, p99_ms: 1500, pending: 3 };
  const health: DeliveryHealth = {
    window: 'hour',
    from: '2026-11-26T08:00:00.000Z',
    to: '2026-11-26T09:00:00.000Z',
    tenants: [
      {
        tenant_id: tenant.tenant_id,
        tenant_name: HOSTILE,
        ...fields,
        last_error: `HTTP 500: ${HOSTILE}`,
        last_failure_at: '2026-11-26T08:59:00.000Z',
      },
    ],
    hosts: [{ host: 'erp.example:8443', ...fields, last_error: null, last_failure_at: null }],
  };
  const none = { at: '2026-11-26T09:00:00.000Z', stuck_after_seconds: 300, accounts: [] };
  const html = render(<HealthPage page={page} window="hour" health={health} registrations={none} />);
  expect(html).not.toContain('<img');
  expect(html).toContain(`<span class="error-text last-error">HTTP 500: ${ESCAPED}</span>`);
  expect(html).toContain(`>${ESCAPED}</a>`);
  expect(html).toContain('>10,0%<');
  expect(html).toContain('>1,5 s<');
  expect(html.match(/class="health-bad"/g)).toHaveLength(2);
  expect([rateClass(null), rateClass(0.5), rateClass(0.95), rateClass(0.995)]).toEqual([
    undefined,
    'health-bad',
    'health-warn',
    undefined,
  ]);
});

describe('providerAccountRequest', () => {
  const form = (fields: Record<string, string>) => new URLSearchParams(fields);

  it('takes the form as the admin API does, leaving empty optional fields out', () => {
    expect(
      providerAccountRequest(
        form({
          provider: 'sandbox',
          beneficiary_name: ' Acme Ltda ',
          beneficiary_tax_id: '11.222.333/0001-81',
          beneficiary_city: '',
          beneficiary_pix_key: 'pix@acme.example',
          base_url: '',
          client_id: '',
        }),
      ),
    ).toEqual({
      provider: 'sandbox',
      beneficiary: { name: 'Acme Ltda', tax_id: '11.222.333/0001-81', pix_key: 'pix@acme.example' },
    });
  });

  it('sends inter credentials only all four together, PEMs as typed', () => {
    const full = providerAccountRequest(
      form({
        provider: 'inter',
        beneficiary_name: 'A',
        beneficiary_tax_id: 'B',
        base_url: 'https://cdpj.partners.bancointer.com.br',
        client_id: 'id',
        client_secret: 's',
        cert_pem: '-----BEGIN CERTIFICATE-----\nx\n',
        key_pem: '-----BEGIN PRIVATE KEY-----\ny\n',
      }),
    );
    expect(full.credentials).toEqual({
      client_id: 'id',
      client_secret: 's',
      cert_pem: '-----BEGIN CERTIFICATE-----\nx\n',
      key_pem: '-----BEGIN PRIVATE KEY-----\ny\n',
    });
    expect(() => providerAccountRequest(form({ provider: 'inter', beneficiary_name: 'A', client_id: 'id' }))).toThrow(
      'credentials: an inter account needs all four',
    );
    expect(() => providerAccountRequest(form({ provider: 'bank' }))).toThrow('provider: must be sandbox or inter');
  });
});

it('each action answering a secret has a confirmation page whose form carries its Idempotency-Key', () => {
  const key = '0b9c7f0e-4f7a-4d8e-9a51-3c2b1a0f9e8d';
  const hidden = `<input type="hidden" name="idempotency_key" value="${key}"/>`;
  const create = render(<ConfirmCreateTenantPage page={page} name={HOSTILE} idempotencyKey={key} />);
  expect(create).toContain('<form method="post" action="/operator/tenants" class="stack confirm">');
  expect(create).toContain(hidden);
  expect(create).toContain(`value="${ESCAPED}"`);
  const issue = render(<ConfirmIssueTokenPage page={page} tenant={tenant} idempotencyKey={key} />);
  expect(issue).toContain(`action="/operator/tenants/${tenant.tenant_id}/tokens" class="stack confirm"`);
  expect(issue).toContain(hidden);

  const rotate = render(<ConfirmRotatePage page={page} tenant={tenant} overlapHours={2} idempotencyKey={key} />);
  expect(rotate).toContain(`action="/operator/tenants/${tenant.tenant_id}/rotate-secret" class="stack confirm"`);
  expect(rotate).toContain(hidden);
  expect(rotate).toContain('<input type="hidden" name="overlap_hours" value="2"/>');
  expect(rotate).toContain('O segredo atual continua aceito por 2 h');
  expect(rotate).not.toContain('confirm_overlap');
  // During an overlap: says until when the previous secret is accepted, and asks for an explicit confirmation.
  const during = render(
    <ConfirmRotatePage
      page={page}
      tenant={{ ...tenant, previous_secret_valid_until: '2026-11-29T14:05:00.000Z' }}
      overlapHours={2}
      idempotencyKey={key}
    />,
  );
  expect(during).toContain('o segredo de antes dela é aceito até 29/11/2026 11:05 (horário de Brasília)');
  expect(during).toContain('<input type="checkbox" name="confirm_overlap" value="true" required/>');
});
