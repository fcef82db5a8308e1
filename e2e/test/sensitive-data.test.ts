import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { AuthenticateResponse, BookletResponse } from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { createTenant, openAdminDatabase } from '@payments/gateway';
import { ApiClient } from '../support/api-client';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { OtlpCollector, OtlpKind } from '../support/otlp-collector';
import { AppProcess } from '../support/process';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { deleteBusStreams, freePort } from '../support/system';

// Nothing sensitive in traces or logs: every app runs as its own process (as `npm start`
// runs it, so the http, koa, pg and undici auto-instrumentations are on), exports its spans to a
// collector started here and logs at debug level. A full flow with a signed download runs: a tenant
// authenticates, registers a payer with a CPF and one with a CNPJ, issues charges, asks for a
// booklet and downloads it through the signed link of the `sent` callback. Then no span (attributes,
// events, status, names, resources: the raw OTLP export) and no log line may hold the link's
// signature query, the integration token, the access token, the signing secret, a payer's document
// or name, or the ERP's own callback URL query.
let database: { url: string; drop: () => Promise<void> };
let adminDb: Awaited<ReturnType<typeof openAdminDatabase>>;
let collector: OtlpCollector;
let receiver: CallbackReceiver;
let busPrefix: string;
let gatewayUrl: string;
const apps: Record<string, AppProcess> = {};

beforeAll(async () => {
  database = await createTestDatabase();
  collector = await new OtlpCollector().start();
  receiver = await new CallbackReceiver().start();
  busPrefix = `t${randomBytes(5).toString('hex')}`;
  const [gatewayPort, sandboxPort, receivablesPort] = [await freePort(), await freePort(), await freePort()];
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    BUS_PREFIX: busPrefix,
    BUS_TIMEOUT_MS: '5000',
    LOG_LEVEL: 'debug',
    PORT: String(gatewayPort),
    ADMIN_PORT: '0',
    PUBLIC_BASE_URL: gatewayUrl,
    BANK_SANDBOX_PORT: String(sandboxPort),
    RECEIVABLES_PORT: String(receivablesPort),
    CLIENTS_PORT: '0',
    CALLBACK_PORT: '0',
    BOOKLET_PORT: '0',
    PROVIDER_BASE_URL: `http://127.0.0.1:${sandboxPort}`,
    BANK_SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${receivablesPort}/provider/webhooks/bank-sandbox`,
    CALLBACK_POLL_INTERVAL_MS: '100',
    OTEL_SDK_DISABLED: 'false',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  const ready: Record<string, string> = {
    'bank-sandbox': 'bank-sandbox ready',
    gateway: 'gateway listening',
    'clients-svc': 'clients-svc ready',
    'receivables-svc': 'receivables-svc ready',
    'callback-svc': 'callback-svc ready',
    'booklet-svc': 'booklet-svc ready',
  };
  for (const app of Object.keys(ready)) apps[app] = new AppProcess(app, env);
  await Promise.all(Object.entries(apps).map(([app, proc]) => proc.start(ready[app], 60_000)));
  adminDb = await openAdminDatabase(database.url);
}, 90_000);

afterAll(async () => {
  await Promise.allSettled(Object.values(apps).map((p) => p.stop()));
  await receiver?.stop();
  await collector?.stop();
  await adminDb?.destroy().catch(() => undefined);
  if (busPrefix) await deleteBusStreams(busPrefix).catch(() => undefined);
  await database?.drop().catch(() => undefined);
});

/** A valid CPF no other test uses: nine random digits and their two check digits. */
function freshCpf(): string {
  const digits = Array.from({ length: 9 }, () => randomInt(10));
  for (const length of [9, 10]) {
    const sum = digits.slice(0, length).reduce((acc, d, i) => acc + d * (length + 1 - i), 0);
    digits.push(((sum * 10) % 11) % 10);
  }
  const s = digits.join('');
  return `${s.slice(0, 3)}.${s.slice(3, 6)}.${s.slice(6, 9)}-${s.slice(9)}`;
}

/** A valid CNPJ no other test uses (twelve random digits, then the check digits). */
function freshCnpj(): string {
  const digits = Array.from({ length: 12 }, () => randomInt(10));
  for (const weights of [
    [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
    [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
  ]) {
    const rest = weights.reduce((acc, w, i) => acc + w * digits[i], 0) % 11;
    digits.push(rest < 2 ? 0 : 11 - rest);
  }
  const s = digits.join('');
  return `${s.slice(0, 2)}.${s.slice(2, 5)}.${s.slice(5, 8)}/${s.slice(8, 12)}-${s.slice(12)}`;
}

/** Names no other line of any log could hold by chance. */
const marker = () =>
  randomBytes(3)
    .toString('hex')
    .replace(/\d/g, (d) => 'ghijklmnop'[Number(d)]);

it('leaves no signed-link query, token, signing secret, payer document or payer name in any span or log line', async () => {
  const tenant = await createTenant(adminDb, 'Loja Sigilosa');
  const auth = await new ApiClient(gatewayUrl).post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
    authorization: `Bearer ${tenant.integration_token}`,
  });
  expect(auth.status).toBe(200);
  const accessToken = auth.json.access_token;
  const api = new ApiClient(gatewayUrl, accessToken);

  const cpf = freshCpf();
  const cnpj = freshCnpj();
  const person = clientPayload({ name: `Zulmira ${marker()} Quaresma`, cnpj_cpf: cpf });
  const company = clientPayload({ name: `Ferragens ${marker()} Ltda`, cnpj_cpf: cnpj });
  expect((await api.postIdempotent('/api/v1/clients', [person, company])).status).toBe(201);

  // The ERP's callback URL carries a key of its own in its query: it must not show up either.
  const erpKey = `erpkey${marker()}`;
  const callbackUrl = `${receiver.url}?key=${erpKey}`;
  const slip = randomUUID();
  const installments = [0, 1].map((i) =>
    receivablePayload(person.client_id, callbackUrl, {
      payment_slip_id: slip,
      due_date: `2027-0${i + 1}-10`,
      value: 150 + i,
    }),
  );
  const companyCharge = receivablePayload(company.client_id, callbackUrl);
  expect((await api.postIdempotent('/api/v1/accounts-receivable', [...installments, companyCharge])).status).toBe(202);
  const registered = () => receiver.delivered().filter((r) => r.body.includes('"type":"registered"'));
  await waitFor(() => registered().length === 3, 30_000, 'three registered callbacks');

  const booklet = await api.postIdempotent<BookletResponse>(`/api/v1/bank-slip-booklet/${slip}`, {
    url_callback: callbackUrl,
  });
  expect(booklet.status).toBe(202);
  const sentCallback = () => receiver.delivered().find((r) => r.body.includes('"type":"sent"'));
  await waitFor(() => sentCallback() !== undefined, 30_000, 'the booklet sent callback');
  const download = new URL((JSON.parse(sentCallback()!.body) as { download: string }).download);
  const signature = download.searchParams.get('signature');
  expect(signature).toBeTruthy();

  const pdf = await fetch(download);
  expect(pdf.status).toBe(200);
  expect(pdf.headers.get('content-type')).toBe('application/pdf');
  expect((await pdf.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  // An altered link is refused; its query must not be recorded either.
  const forged = new URL(download);
  forged.searchParams.set('signature', `forged${marker()}`);
  expect((await fetch(forged)).status).toBe(403);

  // Spans arrive in batches: wait for the download's server span, the booklet-svc's share of the
  // download and the callback POSTs, then a moment more for the stragglers.
  const downloadPath = download.pathname;
  const spans = () => collector.spans;
  await waitFor(
    () =>
      spans().some(
        (s) =>
          s.service === 'gateway' &&
          s.kind === OtlpKind.server &&
          String(s.attributes['url.path'] ?? s.attributes['http.target'] ?? '').startsWith(downloadPath),
      ) &&
      spans().some((s) => s.service === 'booklet-svc' && s.name.includes('booklets.download')) &&
      spans().filter((s) => s.service === 'callback-svc' && s.kind === OtlpKind.client).length >= 4,
    15_000,
    'the spans of the download and of the callbacks',
  );
  await new Promise((r) => setTimeout(r, 1_000));

  // The spans that would carry a leak are there: the test looks at what matters.
  const downloadServerSpans = spans().filter(
    (s) => s.service === 'gateway' && s.kind === OtlpKind.server && String(s.attributes['url.path']) === downloadPath,
  );
  expect(downloadServerSpans.length).toBe(2);
  expect(
    spans().some(
      (s) => s.service === 'callback-svc' && String(s.attributes['url.full'] ?? '').startsWith(receiver.url),
    ),
  ).toBe(true);
  expect(
    spans().some(
      (s) =>
        s.service === 'clients-svc' &&
        typeof (s.attributes['db.query.text'] ?? s.attributes['db.statement']) === 'string',
    ),
  ).toBe(true);
  const logs = Object.entries(apps).map(([app, proc]) => ({ app, lines: proc.output.split('\n').filter(Boolean) }));
  const gatewayLines = logs.find((l) => l.app === 'gateway')!.lines;
  expect(gatewayLines.some((l) => l.includes('"route":"/api/v1/bank-slip-booklet/downloads/:booklet_id"'))).toBe(true);

  const secrets: Record<string, string> = {
    'signature query': 'signature=',
    'link signature': signature!,
    'forged signature': forged.searchParams.get('signature')!,
    'integration token': tenant.integration_token,
    'access token': accessToken,
    'signing secret': tenant.signing_secret,
    'any webhook secret': 'whsec_',
    'payer CPF': cpf,
    'payer CPF digits': cpf.replace(/\D/g, ''),
    'payer CNPJ': cnpj,
    'payer CNPJ digits': cnpj.replace(/\D/g, ''),
    'payer name': person.name,
    'company name': company.name,
    'ERP callback key': erpKey,
  };
  const leaks: string[] = [];
  for (const [what, value] of Object.entries(secrets)) {
    for (const [i, body] of collector.bodies.entries())
      if (body.includes(value)) leaks.push(`${what} in OTLP export ${i}: ${excerpt(body, value)}`);
    for (const { app, lines } of logs)
      for (const line of lines) if (line.includes(value)) leaks.push(`${what} in ${app} log: ${excerpt(line, value)}`);
  }
  expect(leaks).toEqual([]);
});

/** The text around the first occurrence of `value`, to say where a leak is. */
function excerpt(text: string, value: string): string {
  const at = text.indexOf(value);
  return text.slice(Math.max(0, at - 200), at + value.length + 100);
}
