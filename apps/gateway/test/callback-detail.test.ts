import {
  QueueGroups,
  ServiceError,
  Subjects,
  type CallbackEventView,
  type CallbackGetCommand,
} from '@payments/contracts';
import { createTenant } from '../src/domain/tenancy/tenant-admin';
import { startGatewayUnderTest, type GatewayUnderTest } from './support/gateway-under-test';

/*
 * GET /api/v1/callbacks/{event_id}, the gateway's side: each attempt's response_excerpt passes through
 * as callback-svc answers it, for the token's tenant; an older callback-svc (mid-deploy) answers
 * attempts without it (and no payload), and the gateway says null rather than leaving them out. A
 * second bus connection plays callback-svc.
 */

let running: GatewayUnderTest;
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
  running = await startGatewayUnderTest();
  const bus = await running.standIn('test-callbacks');
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
  await running?.stop();
});

async function tenantJwt(): Promise<{ tenantId: string; jwt: string }> {
  const tenant = await createTenant(running.db, 'Callbacks Ltda', { mode: 'development' });
  const res = await fetch(`${running.gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.integration_token}` },
  });
  expect(res.status).toBe(200);
  const { access_token } = (await res.json()) as { access_token: string };
  return { tenantId: tenant.tenant_id, jwt: access_token };
}

async function detail(eventId: string, jwt: string): Promise<{ status: number; json: CallbackEventView }> {
  const res = await fetch(`${running.gateway.url}/api/v1/callbacks/${eventId}`, {
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
