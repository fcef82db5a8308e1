import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import {
  CONSOLE_CURRENT_SESSION_PATH,
  CONSOLE_SESSIONS_PATH,
  CONSOLE_SIGN_OUT_PATH,
  invitationAcceptPath,
  invitationPath,
  OPERATOR_INVITATIONS_PATH,
  OPERATOR_USERS_PATH,
  tenantInvitationsPath,
  tenantUsersPath,
  userRevokePath,
} from '@payments/contracts';
import { keyring } from '@payments/credential-seal';
import { createOperator } from '../src/domain/tenancy/operators';
import { sweepConsolePeople } from '../src/db/people/sweep';
import type { GatewayDatabase } from '../src/db/schema';
import { CALLED_FROM_CODE } from '../src/domain/tenancy/admin-audit';
import { createTenant, disableTenant, revokeToken } from '../src/domain/tenancy/tenant-admin';
import { clockedAdmin, request, totpCode, type CallOptions, type ClockedAdmin } from './support/console-people';
import { startGatewayUnderTest, type GatewayUnderTest } from './support/gateway-under-test';
import { call } from './support/http';

/*
 * Console sessions and people on the admin API, over HTTP against a real Postgres: invitations, the
 * password + TOTP sign-in (codes computed here by RFC 6238 from node:crypto, not by the gateway's
 * library), the current session and its tenant JWT taken by the public API, sign-out, refusals alike
 * and audited, limits per e-mail and address, revocation, and the idle and absolute limits on a clock
 * the test moves.
 */

let running: GatewayUnderTest;
let db: Kysely<GatewayDatabase>;
let bus: Bus;
let dev: ClockedAdmin;
let operatorCredential: string;
let tenant: { tenant_id: string; integration_token: string; token_id: string };
let otherTenant: { tenant_id: string };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const PASSWORD = 'correct horse battery staple';
let emailCount = 0;
const newEmail = () => `person${++emailCount}.${Date.now()}@example.com`;

beforeAll(async () => {
  running = await startGatewayUnderTest();
  db = running.db;
  bus = await running.standIn('console-sessions-test');
  dev = await clockedAdmin(db, bus, running.config, 'development');
  operatorCredential = (await createOperator(db, 'root', CALLED_FROM_CODE)).credential;
  const ring = keyring(running.config.credentialsEncryptionKey, running.config.credentialsPreviousKeys);
  tenant = await createTenant(db, 'Sessions ERP', { mode: 'development', keyring: ring });
  otherTenant = await createTenant(db, 'Other ERP', { mode: 'development', keyring: ring });
}, 60_000);

afterAll(async () => {
  await dev?.close();
  await running?.stop();
});

const admin = (app: ClockedAdmin, method: string, path: string, options: CallOptions = {}) =>
  request(app.url, method, path, { address: '198.51.100.7', ...options });
const unknownCredential = { authorization: 'Bearer opk_unknown' };
const operator = (): CallOptions => ({ authorization: `Bearer ${operatorCredential}` });
const session = (id: string): CallOptions => ({ authorization: `Session ${id}` });

/** Invites, reads and accepts: a user with PASSWORD whose TOTP secret is answered. */
async function makeUser(
  app: ClockedAdmin,
  invite: { path: string; body: unknown; by: CallOptions },
): Promise<{ email: string; secret: string; userId: string }> {
  const created = await admin(app, 'POST', invite.path, { ...invite.by, body: invite.body });
  expect(created.status).toBe(201);
  const token = created.json.invitation_token as string;
  const read = await admin(app, 'GET', invitationPath(token));
  expect(read.status).toBe(200);
  const secret = read.json.totp_secret as string;
  const accepted = await admin(app, 'POST', invitationAcceptPath(token), {
    body: { name: 'Ana Souza', password: PASSWORD, totp: totpCode(secret, app.now()) },
  });
  expect(accepted.status).toBe(201);
  return { email: created.json.email, secret, userId: accepted.json.user_id };
}

/** Signs in with PASSWORD and the code of the next time step (the invitation's step is used). */
async function signIn(app: ClockedAdmin, email: string, secret: string, options: CallOptions = {}) {
  app.advance(30_000);
  return admin(app, 'POST', CONSOLE_SESSIONS_PATH, {
    ...options,
    body: { method: 'password', email, password: PASSWORD, totp: totpCode(secret, app.now()) },
  });
}

async function audit(action: string) {
  return db
    .selectFrom('admin_audit')
    .selectAll()
    .where('action', '=', action as never)
    .orderBy('id')
    .execute();
}

it('invites, accepts with TOTP, signs in, answers a tenant JWT the public API takes, and signs out for good', async () => {
  const email = newEmail();
  const invited = await admin(dev, 'POST', tenantInvitationsPath(tenant.tenant_id), {
    ...operator(),
    body: { email: email.toUpperCase(), role: 'tenant_admin' },
  });
  expect(invited.status).toBe(201);
  expect(invited.headers.get('cache-control')).toBe('no-store');
  expect(invited.json).toMatchObject({ email, role: 'tenant_admin', tenant_id: tenant.tenant_id });
  expect(invited.json.invitation_token).toMatch(/^inv_[A-Za-z0-9_-]{43}$/);
  expect(Date.parse(invited.json.expires_at) - dev.now()).toBe(72 * HOUR);
  const token = invited.json.invitation_token as string;

  const read = await admin(dev, 'GET', invitationPath(token));
  expect(read.status).toBe(200);
  expect(read.json).toMatchObject({ email, role: 'tenant_admin', tenant_name: 'Sessions ERP' });
  const secret = read.json.totp_secret as string;
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  expect(read.json.otpauth_uri).toContain(`secret=${secret}`);
  expect(read.json.otpauth_uri).toMatch(/^otpauth:\/\/totp\//);
  // The secret is made once and kept until accepted.
  expect((await admin(dev, 'GET', invitationPath(token))).json.totp_secret).toBe(secret);

  const accept = (body: unknown) => admin(dev, 'POST', invitationAcceptPath(token), { body });
  const wrongCode = totpCode(secret, dev.now() + 5 * MINUTE);
  let refused = await accept({ name: 'Ana', password: PASSWORD, totp: wrongCode });
  expect(refused.status).toBe(422);
  expect(refused.json.errors).toEqual([expect.objectContaining({ path: '/totp' })]);
  refused = await accept({ name: 'Ana', password: 'short', totp: totpCode(secret, dev.now()) });
  expect(refused.status).toBe(422);
  expect(refused.json.errors).toEqual([expect.objectContaining({ path: '/password' })]);
  const accepted = await accept({ name: 'Ana Souza', password: PASSWORD, totp: totpCode(secret, dev.now()) });
  expect(accepted.status).toBe(201);
  expect(accepted.json).toMatchObject({ email, role: 'tenant_admin', tenant_id: tenant.tenant_id });
  // The password is kept as argon2id, the TOTP secret sealed: neither in clear.
  const stored = await db
    .selectFrom('console_users')
    .select(['password_hash', 'sealed_totp_secret'])
    .where('id', '=', accepted.json.user_id)
    .executeTakeFirstOrThrow();
  expect(stored.password_hash).toMatch(/^\$argon2id\$/);
  expect(JSON.stringify(stored)).not.toContain(PASSWORD);
  expect(JSON.stringify(stored)).not.toContain(secret);
  // Once only: the token opens nothing now.
  expect((await accept({ name: 'Ana', password: PASSWORD, totp: totpCode(secret, dev.now()) })).status).toBe(404);
  expect((await admin(dev, 'GET', invitationPath(token))).status).toBe(404);

  // The code that accepted is used: the same step does not sign in.
  const sameStep = await admin(dev, 'POST', CONSOLE_SESSIONS_PATH, {
    body: { method: 'password', email, password: PASSWORD, totp: totpCode(secret, dev.now()) },
  });
  expect(sameStep.status).toBe(401);
  expect(sameStep.json.code).toBe('sign_in_refused');

  const signedIn = await signIn(dev, email, secret, { address: '203.0.113.9', requestId: 'req-sign-in-1' });
  expect(signedIn.status).toBe(201);
  const s = signedIn.json;
  expect(s.session_id).toMatch(/^ses_[A-Za-z0-9_-]{43}$/);
  expect(s).toMatchObject({
    role: 'tenant_admin',
    tenant_id: tenant.tenant_id,
    tenant_name: 'Sessions ERP',
    user: { user_id: accepted.json.user_id, email, name: 'Ana Souza' },
    started_at: new Date(dev.now()).toISOString(),
    expires_at: new Date(dev.now() + 12 * HOUR).toISOString(),
    idle_expires_at: new Date(dev.now() + 30 * MINUTE).toISOString(),
  });
  // Only the SHA-256 of the session id is stored.
  const sessions = await db.selectFrom('console_sessions').select(['id_hash', 'address']).execute();
  expect(sessions.map((r) => r.id_hash.toString('hex'))).toContain(
    createHash('sha256').update(s.session_id).digest('hex'),
  );
  expect(JSON.stringify(sessions)).not.toContain(s.session_id.slice(4));
  const [signInRow] = (await audit('session.sign-in')).slice(-1);
  expect(signInRow).toMatchObject({
    source: 'console',
    address: '203.0.113.9',
    request_id: 'req-sign-in-1',
    user_email: email,
    user_id: accepted.json.user_id,
    tenant_id: tenant.tenant_id,
  });

  dev.advance(10 * MINUTE);
  const current = await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(s.session_id));
  expect(current.status).toBe(200);
  expect(current.json.idle_expires_at).toBe(new Date(dev.now() + 30 * MINUTE).toISOString());
  const jwt = current.json.tenant_jwt;
  expect(Date.parse(jwt.expires_at) - Date.now()).toBeLessThanOrEqual(300_000 + 1000);
  // The public API takes it for the tenant (no callback-svc runs here, hence no 200).
  const publicCall = await call(running.gateway.url, 'GET', '/api/v1/callbacks', jwt.access_token);
  expect(publicCall.status).not.toBe(401);
  expect((await call(running.gateway.url, 'GET', '/api/v1/callbacks', 'not-a-jwt')).status).toBe(401);

  const out = await admin(dev, 'POST', CONSOLE_SIGN_OUT_PATH, session(s.session_id));
  expect(out.status).toBe(204);
  const after = await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(s.session_id));
  expect(after.status).toBe(401);
  expect(after.json.code).toBe('session_ended');
  expect((await admin(dev, 'POST', CONSOLE_SIGN_OUT_PATH, session(s.session_id))).status).toBe(401);
  expect((await audit('session.sign-out')).slice(-1)[0]).toMatchObject({ user_email: email, source: 'console' });
});

it('refuses an unknown e-mail, a wrong password and a wrong TOTP code alike, and audits each', async () => {
  const { email, secret } = await makeUser(dev, {
    path: tenantInvitationsPath(tenant.tenant_id),
    body: { email: newEmail(), role: 'tenant_viewer' },
    by: operator(),
  });
  dev.advance(30_000);
  const attempt = (body: Record<string, string>) =>
    admin(dev, 'POST', CONSOLE_SESSIONS_PATH, {
      address: '192.0.2.44',
      body: { method: 'password', email, password: PASSWORD, totp: totpCode(secret, dev.now()), ...body },
    });
  const answers = [
    await attempt({ email: newEmail() }),
    await attempt({ password: 'not the password at all' }),
    await attempt({ totp: totpCode(secret, dev.now() + 10 * MINUTE) }),
  ];
  for (const a of answers) {
    expect(a.status).toBe(401);
    expect(a.type).toContain('application/problem+json');
    expect({ code: a.json.code, detail: a.json.detail, title: a.json.title }).toEqual({
      code: answers[0].json.code,
      detail: answers[0].json.detail,
      title: answers[0].json.title,
    });
  }
  expect(answers[0].json.code).toBe('sign_in_refused');
  const refusals = (await audit('session.sign-in-refused')).filter((r) => r.address === '192.0.2.44');
  expect(refusals.map((r) => r.details.reason)).toEqual(['unknown_email', 'wrong_password', 'wrong_totp']);
  expect(refusals.every((r) => r.source === 'console')).toBe(true);
  expect(refusals[1].user_email).toBe(email);
  // Still signs in with the right ones.
  expect((await attempt({})).status).toBe(201);
  // And that code is used now.
  const again = await attempt({});
  expect(again.status).toBe(401);
  expect((await audit('session.sign-in-refused')).slice(-1)[0].details.reason).toBe('totp_reused');
});

it('limits failed sign-ins per e-mail (5 in 15 min) and per address (30), with Retry-After', async () => {
  const { email, secret } = await makeUser(dev, {
    path: tenantInvitationsPath(tenant.tenant_id),
    body: { email: newEmail(), role: 'tenant_viewer' },
    by: operator(),
  });
  const wrong = (address: string) =>
    admin(dev, 'POST', CONSOLE_SESSIONS_PATH, {
      address,
      body: { method: 'password', email, password: 'wrong password!', totp: '000000' },
    });
  // Five failures from five addresses: the e-mail is over its limit, whatever the address.
  for (let i = 0; i < 5; i++) expect((await wrong(`198.18.0.${i + 1}`)).status).toBe(401);
  dev.advance(MINUTE);
  const limited = await signIn(dev, email, secret, { address: '198.18.1.1' });
  expect(limited.status).toBe(429);
  expect(limited.json.code).toBe('rate_limited');
  const retryAfter = Number(limited.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(13 * 60 - 5);
  expect(retryAfter).toBeLessThanOrEqual(15 * 60);
  dev.advance(retryAfter * 1000);
  expect((await signIn(dev, email, secret, { address: '198.18.1.1' })).status).toBe(201);

  // Thirty failures from one address, each for another e-mail: the address is over its limit.
  for (let i = 0; i < 30; i++) {
    const a = await admin(dev, 'POST', CONSOLE_SESSIONS_PATH, {
      address: '198.18.2.2',
      body: { method: 'password', email: newEmail(), password: 'whatever it is', totp: '123456' },
    });
    expect(a.status).toBe(401);
  }
  const fromThere = await signIn(dev, email, secret, { address: '198.18.2.2' });
  expect(fromThere.status).toBe(429);
  expect(Number(fromThere.headers.get('retry-after'))).toBeGreaterThan(0);
  // Another console user's address is not held back.
  expect((await signIn(dev, email, secret, { address: '198.18.3.3' })).status).toBe(201);
}, 60_000);

it('lets a tenant admin invite and revoke its own users only; revoking a user ends its sessions', async () => {
  const adminUser = await makeUser(dev, {
    path: tenantInvitationsPath(tenant.tenant_id),
    body: { email: newEmail(), role: 'tenant_admin' },
    by: operator(),
  });
  const adminSession = (await signIn(dev, adminUser.email, adminUser.secret)).json.session_id as string;
  const viewer = await makeUser(dev, {
    path: tenantInvitationsPath(tenant.tenant_id),
    body: { email: newEmail(), role: 'tenant_viewer' },
    by: session(adminSession),
  });
  const viewerSession = (await signIn(dev, viewer.email, viewer.secret)).json.session_id as string;

  // Bounded to its tenant, and a viewer manages nobody.
  const elsewhere = await admin(dev, 'POST', tenantInvitationsPath(otherTenant.tenant_id), {
    ...session(adminSession),
    body: { email: newEmail(), role: 'tenant_viewer' },
  });
  expect(elsewhere.status).toBe(403);
  expect(
    (
      await admin(dev, 'POST', tenantInvitationsPath(tenant.tenant_id), {
        ...session(viewerSession),
        body: { email: newEmail(), role: 'tenant_viewer' },
      })
    ).status,
  ).toBe(403);
  expect((await admin(dev, 'GET', tenantUsersPath(tenant.tenant_id), session(viewerSession))).status).toBe(403);
  expect(
    (await admin(dev, 'POST', OPERATOR_INVITATIONS_PATH, { ...session(adminSession), body: { email: newEmail() } }))
      .status,
  ).toBe(403);
  // Tenant sessions open no operator route.
  expect((await admin(dev, 'GET', '/admin/v1/tenants', session(adminSession))).status).toBe(403);

  const users = await admin(dev, 'GET', tenantUsersPath(tenant.tenant_id), session(adminSession));
  expect(users.status).toBe(200);
  const listed = users.json.items.find((u: { email: string }) => u.email === viewer.email);
  expect(listed).toMatchObject({ role: 'tenant_viewer', revoked_at: null, name: 'Ana Souza' });
  expect(listed.last_sign_in_at).not.toBeNull();

  const revoked = await admin(dev, 'POST', userRevokePath(viewer.userId), session(adminSession));
  expect(revoked.status).toBe(200);
  expect(revoked.json).toEqual({ user_id: viewer.userId, revoked: true });
  const ended = await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(viewerSession));
  expect(ended.status).toBe(401);
  expect(ended.json.code).toBe('session_ended');
  // A revoked user signs in no more.
  expect((await signIn(dev, viewer.email, viewer.secret)).status).toBe(401);
  expect((await audit('user.revoke')).slice(-1)[0]).toMatchObject({
    user_email: adminUser.email,
    source: 'console',
    tenant_id: tenant.tenant_id,
  });
});

it('opens the admin routes to an operator session, audited as the console user', async () => {
  const op = await makeUser(dev, { path: OPERATOR_INVITATIONS_PATH, body: { email: newEmail() }, by: operator() });
  const signedIn = await signIn(dev, op.email, op.secret, { address: '203.0.113.50', requestId: 'req-op-1' });
  expect(signedIn.json).toMatchObject({ role: 'operator', tenant_id: null, tenant_name: null });
  expect(Date.parse(signedIn.json.expires_at) - dev.now()).toBe(8 * HOUR);
  const id = signedIn.json.session_id as string;
  const current = await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(id));
  expect(current.json.tenant_jwt).toBeUndefined();

  const created = await admin(dev, 'POST', '/admin/v1/tenants', {
    ...session(id),
    body: { name: 'Made by a session' },
    address: '203.0.113.50',
    requestId: 'req-op-2',
  });
  expect(created.status).toBe(201);
  const row = (await audit('tenant.create')).slice(-1)[0];
  expect(row).toMatchObject({
    operator: op.email,
    source: 'console',
    address: '203.0.113.50',
    request_id: 'req-op-2',
    user_email: op.email,
  });
  // The credential keeps working, audited as the admin API.
  const byCredential = await admin(dev, 'POST', '/admin/v1/tenants', {
    ...operator(),
    body: { name: 'By credential' },
  });
  expect(byCredential.status).toBe(201);
  expect((await audit('tenant.create')).slice(-1)[0]).toMatchObject({ operator: 'root', source: 'admin_api' });
  expect(
    (await admin(dev, 'GET', OPERATOR_USERS_PATH, session(id))).json.items.map((u: { email: string }) => u.email),
  ).toContain(op.email);

  await admin(dev, 'POST', CONSOLE_SIGN_OUT_PATH, session(id));
  const after = await admin(dev, 'GET', '/admin/v1/tenants', session(id));
  expect(after.status).toBe(401);
  expect(after.json.code).toBe('session_ended');
});

it('ends a session 30 minutes unused, and 12 hours after sign-in however used', async () => {
  const { email, secret } = await makeUser(dev, {
    path: tenantInvitationsPath(tenant.tenant_id),
    body: { email: newEmail(), role: 'tenant_viewer' },
    by: operator(),
  });
  const idle = (await signIn(dev, email, secret)).json.session_id as string;
  const current = (id: string) => admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(id));
  dev.advance(29 * MINUTE);
  expect((await current(idle)).status).toBe(200);
  dev.advance(29 * MINUTE);
  expect((await current(idle)).status).toBe(200);
  dev.advance(30 * MINUTE);
  expect((await current(idle)).json.code).toBe('session_ended');

  const busy = (await signIn(dev, email, secret)).json.session_id as string;
  const started = dev.now();
  while (dev.now() + 25 * MINUTE < started + 12 * HOUR) {
    dev.advance(25 * MINUTE);
    expect((await current(busy)).status).toBe(200);
  }
  dev.advance(started + 12 * HOUR - dev.now());
  const over = await current(busy);
  expect(over.status).toBe(401);
  expect(over.json.code).toBe('session_ended');
  const ended = await db
    .selectFrom('console_sessions')
    .select(['ended_reason'])
    .where('ended_at', 'is not', null)
    .execute();
  expect(ended.map((r) => r.ended_reason)).toEqual(expect.arrayContaining(['idle', 'expired']));
}, 60_000);

it('signs in with the development methods in development only; revoking the token or disabling the tenant ends those sessions', async () => {
  const prod = await clockedAdmin(db, bus, running.config, 'production');
  try {
    for (const body of [
      { method: 'integration_token', token: tenant.integration_token },
      { method: 'operator_credential', credential: operatorCredential },
    ]) {
      const refused = await admin(prod, 'POST', CONSOLE_SESSIONS_PATH, { body });
      expect(refused.status).toBe(403);
      expect(refused.json.code).toBe('sign_in_method_disabled');
    }
    expect((await audit('session.sign-in-refused')).slice(-1)[0].details.reason).toBe('method_disabled');
  } finally {
    await prod.close();
  }

  const byOperator = await admin(dev, 'POST', CONSOLE_SESSIONS_PATH, {
    body: { method: 'operator_credential', credential: operatorCredential },
  });
  expect(byOperator.status).toBe(201);
  expect(byOperator.json).toMatchObject({ role: 'operator', user: null });

  const ring = keyring(running.config.credentialsEncryptionKey, running.config.credentialsPreviousKeys);
  const t = await createTenant(db, 'Token ERP', { mode: 'development', keyring: ring });
  const byToken = await admin(dev, 'POST', CONSOLE_SESSIONS_PATH, {
    body: { method: 'integration_token', token: t.integration_token },
  });
  expect(byToken.status).toBe(201);
  expect(byToken.json).toMatchObject({ role: 'tenant_admin', tenant_id: t.tenant_id, user: null });
  const tokenSession = byToken.json.session_id as string;
  const current = await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(tokenSession));
  expect(current.status).toBe(200);
  expect(
    (await call(running.gateway.url, 'GET', '/api/v1/callbacks', current.json.tenant_jwt.access_token)).status,
  ).not.toBe(401);
  await revokeToken(db, t.token_id);
  expect((await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(tokenSession))).json.code).toBe(
    'session_ended',
  );

  // Disabling a tenant ends its users' sessions.
  const user = await makeUser(dev, {
    path: tenantInvitationsPath(otherTenant.tenant_id),
    body: { email: newEmail(), role: 'tenant_viewer' },
    by: operator(),
  });
  const userSession = (await signIn(dev, user.email, user.secret)).json.session_id as string;
  expect((await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(userSession))).status).toBe(200);
  await disableTenant(db, otherTenant.tenant_id);
  expect((await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session(userSession))).json.code).toBe('session_ended');
  const row = await db
    .selectFrom('console_sessions')
    .select('ended_reason')
    .where('user_id', '=', user.userId)
    .executeTakeFirst();
  expect(row?.ended_reason).toBe('tenant_disabled');
});

it('names the bad field of a sign-in or invitation, and refuses calls without a session', async () => {
  const bad = await admin(dev, 'POST', CONSOLE_SESSIONS_PATH, { body: { method: 'magic' } });
  expect(bad.status).toBe(422);
  expect(bad.json.errors).toEqual([expect.objectContaining({ path: '/method' })]);
  const noTotp = await admin(dev, 'POST', CONSOLE_SESSIONS_PATH, {
    body: { method: 'password', email: 'a@example.com', password: 'x' },
  });
  expect(noTotp.status).toBe(422);
  const badRole = await admin(dev, 'POST', tenantInvitationsPath(tenant.tenant_id), {
    ...operator(),
    body: { email: newEmail(), role: 'operator' },
  });
  expect(badRole.status).toBe(422);
  expect(badRole.json.errors.map((e: { path: string }) => e.path)).toContain('/role');
  expect((await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH)).status).toBe(401);
  expect((await admin(dev, 'GET', CONSOLE_CURRENT_SESSION_PATH, session('ses_nothing'))).json.code).toBe(
    'session_ended',
  );
  expect(
    (await admin(dev, 'POST', OPERATOR_INVITATIONS_PATH, { ...unknownCredential, body: { email: newEmail() } })).status,
  ).toBe(401);
  expect((await admin(dev, 'GET', invitationPath('inv_unknown'))).status).toBe(404);
});

it('sweeps failed sign-ins outside the window and sessions over for a week, and nothing newer', async () => {
  const now = new Date(dev.now());
  const minutesAgo = (m: number) => new Date(now.getTime() - m * MINUTE);
  await db
    .insertInto('console_sign_in_failures')
    .values([
      { key: 'email:swept@example.com', at: minutesAgo(16) },
      { key: 'email:kept@example.com', at: minutesAgo(14) },
    ])
    .execute();
  const session = (tag: string, endedAt: Date | null, expiresAt: Date) => ({
    id_hash: createHash('sha256').update(tag).digest(),
    role: 'operator' as const,
    tenant_id: null,
    user_id: null,
    token_id: null,
    operator_id: null,
    started_at: minutesAgo(20_000),
    expires_at: expiresAt,
    idle_expires_at: expiresAt,
    ended_at: endedAt,
    ended_reason: endedAt ? 'signed_out' : null,
    address: null,
  });
  await db
    .insertInto('console_sessions')
    .values([
      session('ended long ago', minutesAgo(8 * 24 * 60), minutesAgo(1)),
      session('expired long ago', null, minutesAgo(8 * 24 * 60)),
      session('ended lately', minutesAgo(60), minutesAgo(1)),
    ])
    .execute();
  await sweepConsolePeople(db, now);
  const keys = (await db.selectFrom('console_sign_in_failures').select('key').execute()).map((r) => r.key);
  expect(keys).toContain('email:kept@example.com');
  expect(keys).not.toContain('email:swept@example.com');
  const hashes = (await db.selectFrom('console_sessions').select('id_hash').execute()).map((r) =>
    r.id_hash.toString('hex'),
  );
  const hashOf = (tag: string) => createHash('sha256').update(tag).digest('hex');
  expect(hashes).toContain(hashOf('ended lately'));
  expect(hashes).not.toContain(hashOf('ended long ago'));
  expect(hashes).not.toContain(hashOf('expired long ago'));
});
