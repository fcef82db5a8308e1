import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  PROBLEM_CONTENT_TYPE,
  QueueGroups,
  ServiceError,
  statsBuckets,
  Subjects,
  type ReceivableHistory,
  type ReceivableHistoryCommand,
  type RegistrationStatsCommand,
} from '@payments/contracts';
import { createOperator } from '../src/domain/tenancy/operators';
import type { GatewayDatabase } from '../src/db/schema';
import type { RunningGateway } from '../src/server';
import { createTenant } from '../src/domain/tenancy/tenant-admin';
import { startGatewayUnderTest, type GatewayUnderTest } from './support/gateway-under-test';
import { call } from './support/http';

/*
 * Histories and registration statistics through HTTP, the gateway's side: GET /api/v1/accounts-receivable/{uuid}/history with a
 * tenant's JWT (the tenant the bus is asked for is the token's, never the request's), and GET
 * /admin/v1/stats/registrations with an operator credential only. A second bus connection plays
 * receivables-svc: it answers only a receivable's own tenant (as the service does) and records what
 * it was asked.
 */

let running: GatewayUnderTest;
let gateway: RunningGateway;
let db: Kysely<GatewayDatabase>;
let operatorCredential: string;

const historyAsked: ReceivableHistoryCommand[] = [];
const statsAsked: RegistrationStatsCommand[] = [];
/** What receivables-svc holds: tenant id + receivable id -> its history. */
const histories = new Map<string, ReceivableHistory>();

beforeAll(async () => {
  running = await startGatewayUnderTest();
  ({ gateway, db } = running);
  const bus = await running.standIn('test-receivables');
  bus.serve(
    Subjects.receivables.history,
    async (cmd) => {
      historyAsked.push(cmd);
      const found = histories.get(`${cmd.tenant_id}/${cmd.account_receivable_id}`);
      if (!found) throw new ServiceError('not_found', `no receivable ${cmd.account_receivable_id}`);
      return found;
    },
    { queue: QueueGroups.receivables },
  );
  bus.serve(
    Subjects.receivables.registrationStats,
    async (cmd) => {
      statsAsked.push(cmd);
      const { from, to, bucketSeconds, starts } = statsBuckets(cmd.window, new Date());
      return {
        window: cmd.window,
        bucket_seconds: bucketSeconds,
        from: from.toISOString(),
        to: to.toISOString(),
        series: starts.map((at, i) => ({ at: at.toISOString(), registered: i, failed: 0 })),
      };
    },
    { queue: QueueGroups.receivables },
  );
  await bus.connection.flush();
  operatorCredential = (await createOperator(db, 'Stats Reader', { operator: 'test' })).credential;
});

afterAll(async () => {
  await running?.stop();
});

const get = (base: string, path: string, token?: string) => call(base, 'GET', path, token);

async function tenantWithToken(name: string): Promise<{ tenantId: string; integrationToken: string; jwt: string }> {
  const tenant = await createTenant(db, name, { mode: 'development' });
  const res = await fetch(`${gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.integration_token}` },
  });
  expect(res.status).toBe(200);
  const { access_token } = (await res.json()) as { access_token: string };
  return { tenantId: tenant.tenant_id, integrationToken: tenant.integration_token, jwt: access_token };
}

const historyPath = (id: string) => `/api/v1/accounts-receivable/${id}/history`;

describe('GET /api/v1/accounts-receivable/{uuid}/history', () => {
  it("answers the token's tenant its receivable's history; another tenant's id is 404", async () => {
    const owner = await tenantWithToken('Owner Ltda');
    const stranger = await tenantWithToken('Stranger Ltda');
    const receivableId = randomUUID();
    const history: ReceivableHistory = {
      items: [
        { at: '2026-03-02T12:00:01.204Z', from_state: null, to_state: 'pending', reason: 'received' },
        { at: '2026-03-04T17:05:09.123Z', from_state: 'pending', to_state: 'approved', reason: 'paid by pix' },
      ],
    };
    histories.set(`${owner.tenantId}/${receivableId}`, history);

    const mine = await get(gateway.url, historyPath(receivableId.toUpperCase()), owner.jwt);
    expect(mine.status).toBe(200);
    expect(mine.json).toEqual(history);
    expect(historyAsked.at(-1)).toEqual({ tenant_id: owner.tenantId, account_receivable_id: receivableId });

    const theirs = await get(gateway.url, historyPath(receivableId), stranger.jwt);
    expect(theirs.status).toBe(404);
    expect(theirs.type).toContain(PROBLEM_CONTENT_TYPE);
    expect(theirs.json).toMatchObject({ status: 404, code: 'not_found' });
    expect(historyAsked.at(-1)).toEqual({ tenant_id: stranger.tenantId, account_receivable_id: receivableId });

    expect((await get(gateway.url, historyPath(randomUUID()), owner.jwt)).status).toBe(404);
  });

  it('refuses a malformed id naming the uuid, without asking receivables-svc, and a request without a JWT', async () => {
    const t = await tenantWithToken('Checks Ltda');
    const asked = historyAsked.length;
    const bad = await get(gateway.url, historyPath('not-a-uuid'), t.jwt);
    expect(bad.status).toBe(422);
    expect(bad.type).toContain(PROBLEM_CONTENT_TYPE);
    expect(bad.json.errors).toEqual([{ in: 'path', path: 'uuid', message: 'must be a UUID' }]);
    expect((await get(gateway.url, historyPath(randomUUID()))).status).toBe(401);
    expect((await get(gateway.url, historyPath(randomUUID()), t.integrationToken)).status).toBe(401);
    expect(historyAsked.length).toBe(asked);
  });
});

describe('GET /admin/v1/stats/registrations', () => {
  const path = '/admin/v1/stats/registrations';

  it('answers an operator every bucket of the window, hour by default', async () => {
    const hour = await get(gateway.adminUrl, path, operatorCredential);
    expect(hour.status).toBe(200);
    expect(hour.json).toMatchObject({ window: 'hour', bucket_seconds: 60 });
    expect(hour.json.series).toHaveLength(60);
    expect(statsAsked.at(-1)).toEqual({ window: 'hour' });

    const tenantId = randomUUID();
    const day = await get(
      gateway.adminUrl,
      `${path}?window=day&tenant_id=${tenantId.toUpperCase()}`,
      operatorCredential,
    );
    expect(day.status).toBe(200);
    expect(day.json).toMatchObject({ window: 'day', bucket_seconds: 900 });
    expect(day.json.series).toHaveLength(96);
    expect(statsAsked.at(-1)).toEqual({ window: 'day', tenant_id: tenantId });
  });

  it("needs an operator credential: none, a tenant's JWT or integration token is 401, and the public port has no such route", async () => {
    const t = await tenantWithToken('Curious Ltda');
    const asked = statsAsked.length;
    for (const token of [undefined, t.jwt, t.integrationToken, 'opk_not-a-credential']) {
      const answer = await get(gateway.adminUrl, path, token);
      expect(answer.status).toBe(401);
      expect(answer.type).toContain(PROBLEM_CONTENT_TYPE);
    }
    expect((await get(gateway.url, path, t.jwt)).status).toBe(404);
    expect((await get(gateway.url, path, operatorCredential)).status).not.toBe(200);
    expect(statsAsked.length).toBe(asked);
  });

  it('refuses a bad window or tenant_id naming each, without asking receivables-svc', async () => {
    const asked = statsAsked.length;
    const named = async (query: string) => {
      const answer = await get(gateway.adminUrl, `${path}?${query}`, operatorCredential);
      expect(answer.status).toBe(422);
      expect(answer.type).toContain(PROBLEM_CONTENT_TYPE);
      return (answer.json.errors as Array<{ in: string; path: string }>).map((e) => `${e.in}:${e.path}`);
    };
    expect(await named('window=week')).toEqual(['query:window']);
    expect(await named('window=')).toEqual(['query:window']);
    expect(await named('tenant_id=123')).toEqual(['query:tenant_id']);
    expect(await named('window=minute&tenant_id=x')).toEqual(['query:window', 'query:tenant_id']);
    expect(await named('window=hour&window=day')).toEqual(['query:window']);
    expect(statsAsked.length).toBe(asked);
  });
});
