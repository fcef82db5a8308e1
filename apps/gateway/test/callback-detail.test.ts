import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import {
  QueueGroups,
  ServiceError,
  Subjects,
  type CallbackEventView,
  type CallbackGetCommand,
} from '@payments/contracts';
import { createDatabase, createTestDatabase } from '@payments/db';
import { createLogger } from '@payments/logger';
import { loadGatewayConfig } from '../src/config';
import { SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import { startGateway, type RunningGateway } from '../src/server';
import { createTenant } from '../src/tenancy/tenant-admin';

/*
 * GET /api/v1/callbacks/{event_id}, the gateway's side: each attempt's response_excerpt passes through
 * as callback-svc answers it, for the token's tenant; an older callback-svc (mid-deploy) answers
 * attempts without it (and no payload), and the gateway says null rather than leaving them out. A
 * second bus connection plays callback-svc.
 */

const silent = createLogger('test', 'silent');
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = `t${randomBytes(5).toString('hex')}`;
let gateway: RunningGateway;
let db: Kysely<GatewayDatabase>;
let bus: Bus;
let dropDatabase: () => Promise<void>;
const asked: CallbackGetCommand[] = [];
/** What callback-svc answers, by event id (an older one's shape is allowed: the wire is untyped). */
const views = new Map<string, unknown>();

const XSS = '<img src=x onerror=alert(1)>';
const attempt = {
  attempted_at: '2026-02-21T12:00:03.311Z',
  status_code: 500,
  error: 'HTTP 500',
  duration_ms: 42,
};
const event = {
  event_id: 'evt_new',
  event_type: 'receivable.registered',
  url: 'https://erp.example.com/callbacks',
  status: 'dead',
  created_at: '2026-02-21T12:00:03.204Z',
  delivered_at: null,
};

beforeAll(async () => {
  const database = await createTestDatabase();
  dropDatabase = database.drop;
  gateway = await startGateway(
    loadGatewayConfig({
      DATABASE_URL: database.url,
      BUS_PREFIX: prefix,
      PORT: '0',
      LOG_LEVEL: 'silent',
      BUS_TIMEOUT_MS: '2000',
    }),
    silent,
  );
  db = createDatabase<GatewayDatabase>({ url: database.url, schema: SCHEMA, poolSize: 2 });
  bus = await connectBus({ url: NATS_URL, prefix, name: 'test-callbacks', logger: silent });
  bus.serve(
    Subjects.callbacks.get,
    async (cmd) => {
      asked.push(cmd);
      const view = views.get(cmd.event_id);
      if (!view) throw new ServiceError('not_found', `no callback event ${cmd.event_id}`);
      return view as CallbackEventView;
    },
    { queue: QueueGroups.callbacks },
  );
  await bus.connection.flush();
});

afterAll(async () => {
  await gateway?.stop();
  await bus?.close();
  await db?.destroy();
  await dropDatabase?.();
});

async function tenantJwt(): Promise<{ tenantId: string; jwt: string }> {
  const tenant = await createTenant(db, 'Callbacks Ltda', { mode: 'development' });
  const res = await fetch(`${gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.integration_token}` },
  });
  expect(res.status).toBe(200);
  const { access_token } = (await res.json()) as { access_token: string };
  return { tenantId: tenant.tenant_id, jwt: access_token };
}

async function detail(eventId: string, jwt: string): Promise<{ status: number; json: CallbackEventView }> {
  const res = await fetch(`${gateway.url}/api/v1/callbacks/${eventId}`, {
    headers: { authorization: `Bearer ${jwt}` },
  });
  return { status: res.status, json: (await res.json()) as CallbackEventView };
}

it("answers each attempt's response_excerpt as callback-svc gives it, asking for the token's tenant", async () => {
  const { tenantId, jwt } = await tenantJwt();
  const view = {
    ...event,
    attempts: [
      { ...attempt, response_excerpt: XSS },
      { ...attempt, status_code: null, error: 'no answer within 10000 ms', response_excerpt: null },
    ],
    payload: { success: true },
  };
  views.set('evt_new', view);
  const res = await detail('evt_new', jwt);
  expect(res.status).toBe(200);
  expect(res.json).toEqual(view);
  expect(asked.at(-1)).toEqual({ tenant_id: tenantId, event_id: 'evt_new' });
});

it('says null for the excerpts (and the payload) an older callback-svc leaves out', async () => {
  const { jwt } = await tenantJwt();
  views.set('evt_old', { ...event, event_id: 'evt_old', attempts: [attempt, attempt] });
  const res = await detail('evt_old', jwt);
  expect(res.status).toBe(200);
  expect(res.json.payload).toBeNull();
  expect(res.json.attempts).toEqual([
    { ...attempt, response_excerpt: null },
    { ...attempt, response_excerpt: null },
  ]);
});
