import { createDatabase, createTestDatabase } from '@payments/db';
import { sql, type Kysely } from 'kysely';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { connect } from 'nats';
import { ServiceScope } from '@payments/lifecycle';
import {
  evaluateReadiness,
  migrationsCheck,
  mountHealthRoutes,
  natsCheck,
  openOpsServer,
  postgresCheck,
  startOpsServer,
  type ReadinessCheck,
  type RunningOpsServer,
} from '../src';

/** A check the test turns on and off. */
function switchable(name: string): ReadinessCheck & { failWith?: string } {
  const check: ReadinessCheck & { failWith?: string } = {
    name,
    probe: async () => {
      if (check.failWith) throw new Error(check.failWith);
    },
  };
  return check;
}

describe('ops server', () => {
  const postgres = switchable('postgres');
  const nats = switchable('nats');
  let server: RunningOpsServer;

  beforeAll(async () => {
    server = await startOpsServer({
      port: 0,
      checks: [postgres, nats],
      routes: { '/extra': (ctx) => void (ctx.body = 'extra') },
    });
  });
  afterAll(() => server.stop());

  it('answers /healthz 200 {status: ok} whatever the dependencies do', async () => {
    postgres.failWith = 'down';
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    postgres.failWith = undefined;
  });

  it('answers /readyz 200 when every check passes', async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', checks: { postgres: { status: 'ok' }, nats: { status: 'ok' } } });
  });

  it('answers /readyz 503 application/json naming each failing check, and recovers', async () => {
    postgres.failWith = 'connect ECONNREFUSED';
    nats.failWith = 'the NATS connection is closed';
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({
      status: 'unavailable',
      failing: ['postgres', 'nats'],
      checks: {
        postgres: { status: 'failing', error: 'connect ECONNREFUSED' },
        nats: { status: 'failing', error: 'the NATS connection is closed' },
      },
    });
    postgres.failWith = undefined;
    nats.failWith = undefined;
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('serves the routes the app adds, and 404 elsewhere', async () => {
    expect(await (await fetch(`${server.url}/extra`)).text()).toBe('extra');
    expect((await fetch(`${server.url}/nothing`)).status).toBe(404);
  });
});

describe('readiness on a public port (mountHealthRoutes without showErrors)', () => {
  const postgres = switchable('postgres');
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const app = new Koa();
    const router = new Router();
    mountHealthRoutes(router, { checks: [postgres, switchable('nats')] });
    app.use(router.routes());
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('names the failing checks without their raw error messages', async () => {
    postgres.failWith = 'password authentication failed for user "payments" at db.internal:5432';
    const res = await fetch(`${url}/readyz`);
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(JSON.parse(text)).toEqual({
      status: 'unavailable',
      failing: ['postgres'],
      checks: { postgres: { status: 'failing' }, nats: { status: 'ok' } },
    });
    expect(text).not.toContain('db.internal');
    postgres.failWith = undefined;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });
});

describe('checks', () => {
  it('cuts a check that hangs at the timeout', async () => {
    const report = await evaluateReadiness(
      [natsCheck({ isClosed: () => false, flush: () => new Promise<void>(() => undefined) })],
      50,
    );
    expect(report).toEqual({
      ready: false,
      failing: ['nats'],
      checks: { nats: { status: 'failing', error: 'nats did not answer within 50 ms' } },
    });
  });

  it('passes nats on a live connection and fails it once the connection is closed', async () => {
    const connection = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    const check = natsCheck(connection);
    expect((await evaluateReadiness([check])).ready).toBe(true);
    await connection.close();
    expect((await evaluateReadiness([check])).checks.nats).toEqual({
      status: 'failing',
      error: 'the NATS connection is closed',
    });
  });

  describe('against Postgres', () => {
    let database: { url: string; drop: () => Promise<void> };
    let db: Kysely<unknown>;
    beforeAll(async () => {
      database = await createTestDatabase();
      db = createDatabase<unknown>({ url: database.url, schema: 'health_test' });
    });
    afterAll(async () => {
      await db.destroy();
      await database.drop();
    });

    it('passes postgres when select 1 answers, fails it when nothing listens', async () => {
      expect((await evaluateReadiness([postgresCheck(db)])).ready).toBe(true);
      const unreachable = createDatabase<unknown>({ url: 'postgres://postgres@127.0.0.1:1/none', schema: 'x' });
      try {
        const report = await evaluateReadiness([postgresCheck(unreachable)]);
        expect(report.failing).toEqual(['postgres']);
        expect(report.checks.postgres.error).toMatch(/ECONNREFUSED/);
      } finally {
        await unreachable.destroy();
      }
    });

    it('fails migrations until every expected migration is recorded', async () => {
      await sql`create schema health_test`.execute(db);
      await sql`create table health_test.kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null)`.execute(
        db,
      );
      await sql`insert into health_test.kysely_migration values ('0001_init', 'now')`.execute(db);
      const check = migrationsCheck(db, 'health_test', ['0001_init', '0002_more']);
      expect((await evaluateReadiness([check])).checks.migrations).toEqual({
        status: 'failing',
        error: 'migrations not applied: 0002_more',
      });
      await sql`insert into health_test.kysely_migration values ('0002_more', 'now')`.execute(db);
      expect((await evaluateReadiness([check])).ready).toBe(true);
    });

    it("a service's ops server: ready on Postgres, NATS and every migration, stopped with its scope", async () => {
      const scope = new ServiceScope();
      const connection = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
      try {
        const ops = await openOpsServer(scope, {
          port: 0,
          db,
          nats: connection,
          schema: 'health_test',
          migrations: { '0001_init': {}, '0002_more': {}, '0003_unapplied': {} },
          routes: { '/extra': (ctx) => void (ctx.body = 'extra') },
        });
        const notMigrated = await fetch(`${ops.url}/readyz`);
        expect(notMigrated.status).toBe(503);
        expect(await notMigrated.json()).toMatchObject({ failing: ['migrations'] });
        await sql`insert into health_test.kysely_migration values ('0003_unapplied', 'now')`.execute(db);
        expect((await fetch(`${ops.url}/readyz`)).status).toBe(200);
        expect(await (await fetch(`${ops.url}/extra`)).text()).toBe('extra');
        await scope.close();
        await expect(fetch(`${ops.url}/healthz`)).rejects.toThrow();
      } finally {
        await scope.close();
        await connection.close();
      }
    });
  });
});
