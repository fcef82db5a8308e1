import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, JSONCodec, type NatsConnection, type Subscription } from 'nats';
import { Webhook } from 'standardwebhooks';
import { inboxPrefixOf } from '@payments/bus';
import { Streams, Subjects, type DeadLetterView, type SigningSecretReply } from '@payments/contracts';
import { createOperator, openAdminDatabase } from '@payments/gateway';
import { runAdmin } from '../support/admin-cli';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { ROOT } from '../support/launcher';
import { PrivateNats } from '../support/private-nats';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { bookletSent } from '../support/booklet-callbacks';
import { isRegistered, receivableCallbacks } from '../support/receivable-callbacks';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/**
 * The bus as production runs it: nats-server on the repository's config (deploy/nats, rendered for
 * this test's prefix), each service logging in as its own user. Without credentials nothing connects;
 * a service's user cannot ask, serve, publish or read what another owns; and the system still works.
 */

const SERVICES = ['gateway', 'clients-svc', 'receivables-svc', 'booklet-svc', 'callback-svc'] as const;
type Service = (typeof SERVICES)[number];
// nats-server parses a $VARIABLE's value as a config value: a password starts with a letter (or is quoted).
const secret = () => `p${randomBytes(12).toString('hex')}`;
const password: Record<Service | 'admin' | 'admin-cli', string> = {
  gateway: secret(),
  'clients-svc': secret(),
  'receivables-svc': secret(),
  'booklet-svc': secret(),
  'callback-svc': secret(),
  admin: secret(),
  'admin-cli': secret(),
};
/** The server's environment: the $NATS_..._PASSWORD references of the config. */
const serverEnv = {
  NATS_GATEWAY_PASSWORD: password.gateway,
  NATS_CLIENTS_SVC_PASSWORD: password['clients-svc'],
  NATS_RECEIVABLES_SVC_PASSWORD: password['receivables-svc'],
  NATS_BOOKLET_SVC_PASSWORD: password['booklet-svc'],
  NATS_CALLBACK_SVC_PASSWORD: password['callback-svc'],
  NATS_ADMIN_PASSWORD: password.admin,
  NATS_ADMIN_CLI_PASSWORD: password['admin-cli'],
};

const prefix = `t${randomBytes(5).toString('hex')}`;
const json = JSONCodec<unknown>();
let nats: PrivateNats;
let system: TestSystem;
let tenant: TestTenant;
let receiver: CallbackReceiver;
let admin: NatsConnection;
const probes: NatsConnection[] = [];

beforeAll(async () => {
  const config = execFileSync('sh', [join(ROOT, 'deploy', 'nats', 'render.sh'), prefix], { encoding: 'utf8' });
  nats = await PrivateNats.create({ config, env: serverEnv });
  admin = await connect({ servers: nats.url, user: 'admin', pass: password.admin, name: 'probe-admin' });
  system = await startSystem({
    // Provisioned (`npm run admin -- bus provision`) by the admin user: no service may create a stream.
    provisionEnv: { NATS_USER: 'admin', NATS_PASSWORD: password.admin },
    withReceivables: true,
    withBooklets: true,
    env: { NATS_URL: nats.url, BUS_PREFIX: prefix, CALLBACK_POLL_INTERVAL_MS: '50' },
    appEnv: Object.fromEntries(SERVICES.map((s) => [s, { NATS_USER: s, NATS_PASSWORD: password[s] }])),
  });
  tenant = await system.newTenant('Loja Autenticada');
  receiver = await new CallbackReceiver().start();
}, 120_000);

afterAll(async () => {
  for (const c of probes) await c.close().catch(() => undefined);
  await admin?.close().catch(() => undefined);
  await receiver?.stop();
  await system?.stop();
  await nats?.destroy();
});

/** A connection as one service's user, as an intruder holding its password would open it. */
async function probeAs(user: Service): Promise<NatsConnection> {
  const c = await connect({
    servers: nats.url,
    user,
    pass: password[user],
    name: `probe-${user}`,
    inboxPrefix: inboxPrefixOf(user),
  });
  probes.push(c);
  return c;
}

/** What the server refused to `user` from here on, as its log says: `Publish <subject>`, `Subscription <subject>`. */
function refusals(user: string): () => string[] {
  const from = nats.output.length;
  return () =>
    [...nats.output.slice(from).matchAll(/(Publish|Subscription) Violation - User "([^"]+)", Subject "([^"]+)"/g)]
      .filter((m) => m[2] === user)
      .map((m) => `${m[1]} ${m[3]}`);
}

/** Copies every message on `subject` that reaches anyone (admin sees all): to prove nothing got through. */
function watch(subject: string): { seen: string[]; sub: Subscription } {
  const seen: string[] = [];
  const sub = admin.subscribe(subject, { callback: (_err, m) => seen.push(m.subject) });
  return { seen, sub };
}

/** Subscribing where the user may not: the server refuses, nats.js closes the subscription with the error. */
async function subscriptionRefused(c: NatsConnection, subject: string): Promise<string> {
  const sub = c.subscribe(subject);
  let error = '';
  const iterating = (async () => {
    try {
      for await (const m of sub) error = `received ${m.subject}`;
    } catch (err) {
      error = (err as Error).message;
    }
  })();
  await c.flush();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([iterating, new Promise((r) => (timer = setTimeout(r, 3_000)))]);
  clearTimeout(timer);
  sub.unsubscribe();
  return error;
}

const subject = (relative: string) => `${prefix}.${relative}`;

it('refuses a connection without credentials or with a wrong password', async () => {
  await expect(connect({ servers: nats.url, maxReconnectAttempts: 0 })).rejects.toMatchObject({
    code: 'AUTHORIZATION_VIOLATION',
  });
  await expect(
    connect({ servers: nats.url, user: 'gateway', pass: 'not-the-password', maxReconnectAttempts: 0 }),
  ).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
});

it('only callback-svc may ask for a signing secret, and only it reads the reply', async () => {
  const watched = watch(subject(Subjects.tenants.signingSecret));
  await admin.flush();

  // booklet-svc's and receivables-svc's users cannot ask: the request never reaches the gateway.
  for (const user of ['booklet-svc', 'receivables-svc', 'gateway', 'clients-svc'] as const) {
    const probe = await probeAs(user);
    const refused = refusals(user);
    await expect(
      probe.request(subject(Subjects.tenants.signingSecret), json.encode({ tenant_id: tenant.tenantId }), {
        timeout: 1_000,
      }),
    ).rejects.toThrow();
    await waitFor(() => refused().length > 0, 5_000, `${user} refused`);
    expect(refused()).toEqual([`Publish ${subject(Subjects.tenants.signingSecret)}`]);
  }
  // Nor read callback-svc's replies, nor serve the subject in the gateway's place.
  const booklets = await probeAs('booklet-svc');
  const refused = refusals('booklet-svc');
  for (const s of [`${inboxPrefixOf('callback-svc')}.>`, '_INBOX.>', subject(Subjects.tenants.signingSecret), '>'])
    expect(await subscriptionRefused(booklets, s)).toMatch(/permissions violation/i);
  await waitFor(() => refused().length >= 4, 5_000, 'four refusals in the server log');
  expect(refused()).toEqual([
    `Subscription ${inboxPrefixOf('callback-svc')}.>`,
    'Subscription _INBOX.>',
    `Subscription ${subject(Subjects.tenants.signingSecret)}`,
    'Subscription >',
  ]);
  await admin.flush();
  expect(watched.seen).toEqual([]);

  // callback-svc's user asks, and gets the tenant's secret in its own inbox.
  const callbacks = await probeAs('callback-svc');
  const reply = json.decode(
    (
      await callbacks.request(subject(Subjects.tenants.signingSecret), json.encode({ tenant_id: tenant.tenantId }), {
        timeout: 5_000,
      })
    ).data,
  ) as { ok: true; data: SigningSecretReply };
  expect(reply.ok).toBe(true);
  expect(JSON.stringify(reply.data)).toContain(tenant.signingSecret);
  await admin.flush();
  expect(watched.seen).toHaveLength(1);
  watched.sub.unsubscribe();
});

it('only receivables-svc may ask for provider credentials', async () => {
  const watched = watch(subject(Subjects.tenants.providerCredentials));
  await admin.flush();
  for (const user of ['gateway', 'booklet-svc', 'callback-svc', 'clients-svc'] as const) {
    const probe = await probeAs(user);
    await expect(
      probe.request(subject(Subjects.tenants.providerCredentials), json.encode({ tenant_id: tenant.tenantId }), {
        timeout: 1_000,
      }),
    ).rejects.toThrow();
  }
  await admin.flush();
  expect(watched.seen).toEqual([]);
  watched.sub.unsubscribe();
});

it("a service's user cannot publish to, read or consume another service's stream", async () => {
  const jsm = await admin.jetstreamManager();
  const registrations = `${prefix}_${Streams.receivableRegistrations.name}`;
  const before = (await jsm.streams.info(registrations)).state.messages;

  const clients = await probeAs('clients-svc');
  const refused = refusals('clients-svc');
  await expect(
    clients
      .jetstream()
      .publish(subject(Streams.receivableRegistrations.subject), json.encode({ tenant_id: 'x', receivable_ids: [] }), {
        timeout: 1_000,
      }),
  ).rejects.toThrow();
  // Nor pull the registration worker's messages, nor add a consumer of its own, nor read the stream.
  await expect(
    clients.request(
      `$JS.API.CONSUMER.MSG.NEXT.${registrations}.${Streams.receivableRegistrations.consumer}`,
      json.encode({ batch: 1 }),
      { timeout: 1_000 },
    ),
  ).rejects.toThrow();
  await expect(
    clients.request(
      `$JS.API.CONSUMER.CREATE.${registrations}.spy`,
      json.encode({ stream_name: registrations, config: { name: 'spy' } }),
      { timeout: 1_000 },
    ),
  ).rejects.toThrow();
  await expect(
    clients.request(`$JS.API.STREAM.MSG.GET.${registrations}`, json.encode({ seq: 1 }), { timeout: 1_000 }),
  ).rejects.toThrow();
  await waitFor(() => refused().length >= 4, 5_000, 'four refusals');
  expect(refused()).toEqual([
    `Publish ${subject(Streams.receivableRegistrations.subject)}`,
    `Publish $JS.API.CONSUMER.MSG.NEXT.${registrations}.${Streams.receivableRegistrations.consumer}`,
    `Publish $JS.API.CONSUMER.CREATE.${registrations}.spy`,
    `Publish $JS.API.STREAM.MSG.GET.${registrations}`,
  ]);

  // booklet-svc publishes callback requests (its own outbox) but not registrations either.
  const booklets = await probeAs('booklet-svc');
  await expect(
    booklets.jetstream().publish(subject(Streams.receivableRegistrations.subject), json.encode({}), { timeout: 1_000 }),
  ).rejects.toThrow();
  expect((await jsm.streams.info(registrations)).state.messages).toBe(before);
  expect((await jsm.consumers.list(registrations).next()).map((c) => c.name)).toEqual([
    Streams.receivableRegistrations.consumer,
  ]);
});

it('the whole system works with each service as its own user: clients, charges, callbacks, a booklet', async () => {
  // A batch of clients too large for one NATS message (1 MB): it travels by claim check, both ways.
  const pad = 'x'.repeat(234);
  const batch = Array.from({ length: 1_000 }, (_, i) =>
    clientPayload({
      name: `Cliente ${i} ${pad}`,
      address: `Rua ${pad}`,
      complement: `Apto ${pad}`,
      return_client_data: true,
    }),
  );
  expect(Buffer.byteLength(JSON.stringify(batch))).toBeGreaterThan(1_000_000);
  const created = await tenant.api.postIdempotent('/api/v1/clients', batch);
  expect(created.status).toBe(201);
  expect(created.text.length).toBeGreaterThan(1_000_000);

  const client = clientPayload({ name: 'João Pagador' });
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
  const slip = randomUUID();
  const items = [0, 1, 2].map((i) =>
    receivablePayload(client.client_id, receiver.url, { payment_slip_id: slip, due_date: `2027-0${i + 1}-10` }),
  );
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
  await waitFor(
    () => receivableCallbacks(receiver).filter(isRegistered).length === 3,
    30_000,
    'three registered callbacks',
  );
  // Signed with the tenant's secret, which callback-svc asked the gateway for over the bus.
  const registered = receiver.received.find((r) => r.body.includes('"registered"'))!;
  expect(() => new Webhook(tenant.signingSecret).verify(registered.body, registered.headers)).not.toThrow();

  const booklet = await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url });
  expect(booklet.status).toBe(202);
  await waitFor(() => bookletSent(receiver, slip) !== undefined, 30_000, 'booklet sent callback');
  const pdf = await fetch(bookletSent(receiver, slip)!.download);
  expect(pdf.status).toBe(200);
  expect(pdf.headers.get('content-type')).toContain('application/pdf');

  // Readiness and metrics (the streams' fill gauge reads their info) under each service's user too.
  const apps = [system.gateway, system.clients, system.receivables, system.booklets, system.callbacks];
  for (const url of apps.map((app) => app?.url)) {
    expect([url, (await fetch(`${url}/readyz`)).status]).toEqual([url, 200]);
    expect([url, (await fetch(`${url}/metrics`)).status]).toEqual([url, 200]);
  }

  // The apps' own connections (named after their service) never hit a permission the config lacks.
  const refusedApps = nats.output.split('\n').filter((line) => /Violation/.test(line) && !line.includes('probe-'));
  expect(refusedApps).toEqual([]);
}, 90_000);

it("a poison job is dead-lettered under the services' own users; the admin CLI, as admin-cli, lists and re-drives it and may do nothing else", async () => {
  // receivables-svc's user may publish registrations (its outbox does): a malformed one, as a bug would.
  const receivables = await probeAs('receivables-svc');
  await receivables
    .jetstream()
    .publish(subject(Streams.receivableRegistrations.subject), new TextEncoder().encode('{"not json'), {
      msgID: 'poison-under-auth',
    });
  const cli = (...args: string[]) =>
    runAdmin(system.databaseUrl, args, {
      env: { NATS_URL: nats.url, BUS_PREFIX: prefix, NATS_USER: 'admin-cli', NATS_PASSWORD: password['admin-cli'] },
    });
  let dead: DeadLetterView | undefined;
  await waitFor(
    async () => {
      const run = await cli('jobs', 'dead', '--json');
      if (run.code !== 0) throw new Error(`jobs dead exited ${run.code}: ${run.stderr}`);
      dead = (JSON.parse(run.stdout) as DeadLetterView[]).find((d) => d.msg_id === 'poison-under-auth');
      return dead !== undefined;
    },
    20_000,
    'the poison listed',
  );
  expect(dead).toMatchObject({ stream: `${prefix}_${Streams.receivableRegistrations.name}`, failures: 1 });
  const redrive = await cli('jobs', 'redrive', String(dead!.id), '--json');
  expect(redrive.stderr).toBe('');
  expect(redrive.code).toBe(0);
  // Still poison: dead-lettered again, under its re-drive id.
  await waitFor(
    async () =>
      (JSON.parse((await cli('jobs', 'dead', '--json')).stdout) as DeadLetterView[]).some(
        (d) => d.msg_id === `poison-under-auth:redrive:${dead!.id}`,
      ),
    20_000,
    'the re-driven poison dead-lettered again',
  );

  // The gateway's admin API (ADMIN_PORT) lists and re-drives it too, under the gateway's own user.
  const adminDb = await openAdminDatabase(system.databaseUrl);
  const operator = await createOperator(adminDb, 'Bus Ops', { operator: 'test' }).finally(() => adminDb.destroy());
  const adminApi = async (method: string, path: string) => {
    const res = await fetch(system.gateway.adminUrl + path, {
      method,
      headers: { authorization: `Bearer ${operator.credential}` },
    });
    return { status: res.status, json: (await res.json()) as { items?: DeadLetterView[]; msg_id?: string } };
  };
  const listed = await adminApi('GET', '/admin/v1/dead-letters');
  expect(listed.status).toBe(200);
  const again = listed.json.items!.find((d) => d.msg_id === `poison-under-auth:redrive:${dead!.id}`);
  expect(again).toBeDefined();
  const viaApi = await adminApi('POST', `/admin/v1/dead-letters/${again!.id}/redrive`);
  expect(viaApi.status).toBe(200);
  expect(viaApi.json.msg_id).toBe(`poison-under-auth:redrive:${dead!.id}:redrive:${again!.id}`);
  // The callback statistics (admin) and a replay (public) too: the gateway asks, callback-svc answers.
  expect((await adminApi('GET', '/admin/v1/stats/deliveries?window=day')).status).toBe(200);
  expect((await adminApi('GET', '/admin/v1/delivery-health')).status).toBe(200);
  const since = new Date(Date.now() - 3_600_000).toISOString();
  expect((await tenant.api.send('POST', '/api/v1/callbacks/replay', { since })).status).toBe(202);

  // admin-cli's user reads no job stream and asks no service.
  const c = await connect({
    servers: nats.url,
    user: 'admin-cli',
    pass: password['admin-cli'],
    name: 'probe-admin-cli',
    inboxPrefix: inboxPrefixOf('admin-cli'),
  });
  probes.push(c);
  const refused = refusals('admin-cli');
  const registrations = `${prefix}_${Streams.receivableRegistrations.name}`;
  await expect(
    c.request(`$JS.API.STREAM.MSG.GET.${registrations}`, json.encode({ seq: 1 }), { timeout: 1_000 }),
  ).rejects.toThrow();
  await expect(
    c.request(subject(Subjects.tenants.signingSecret), json.encode({ tenant_id: tenant.tenantId }), { timeout: 1_000 }),
  ).rejects.toThrow();
  await waitFor(() => refused().length >= 2, 5_000, 'two refusals');
  expect(refused()).toEqual([
    `Publish $JS.API.STREAM.MSG.GET.${registrations}`,
    `Publish ${subject(Subjects.tenants.signingSecret)}`,
  ]);
  // The apps' own connections never hit a permission the config lacks, dead letters included.
  const refusedApps = nats.output.split('\n').filter((line) => /Violation/.test(line) && !line.includes('probe-'));
  expect(refusedApps).toEqual([]);
}, 90_000);

it('the config names every request subject and stream of the contracts', () => {
  const template = readFileSync(join(ROOT, 'deploy', 'nats', 'nats-server.conf.template'), 'utf8');
  const relative = Object.values(Subjects).flatMap((group) => Object.values(group));
  for (const s of relative) expect(template).toContain(`"\${BUS_PREFIX}.${s}"`);
  for (const spec of Object.values(Streams)) {
    expect(template).toContain(`"\${BUS_PREFIX}.${spec.subject}"`);
    expect(template).toContain(`$JS.API.CONSUMER.MSG.NEXT.\${BUS_PREFIX}_${spec.name}.${spec.consumer}"`);
  }
});
