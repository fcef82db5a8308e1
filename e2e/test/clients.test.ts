import { randomUUID } from 'node:crypto';
import type { ClientsCreateResponse, Problem } from '@payments/contracts';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { clientPayload, receivablePayload, VALID_ALPHANUMERIC_CNPJ, VALID_CNPJ } from '../support/fixtures';
import { countClients, queryRows } from '../support/db-probe';

let system: TestSystem;
let tenant: TestTenant;
beforeAll(async () => {
  system = await startSystem();
  tenant = await system.newTenant('Clients');
});
afterAll(async () => {
  await system?.stop();
});

describe('POST /api/v1/clients', () => {
  it('creates a batch: 201, with data (Portuguese keys) only where return_client_data is true', async () => {
    const withData = clientPayload({ return_client_data: true });
    const withoutData = clientPayload({ return_client_data: false, cnpj_cpf: VALID_CNPJ });
    const flagAbsent = clientPayload({ cnpj_cpf: VALID_ALPHANUMERIC_CNPJ });
    delete (flagAbsent as Record<string, unknown>).return_client_data;
    const res = await tenant.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [
      withData,
      withoutData,
      flagAbsent,
    ]);
    expect(res.status).toBe(201);
    expect(res.json.status).toBe('success');
    expect(typeof res.json.message).toBe('string');
    expect(res.json.clients_already_registered).toEqual([]);
    expect(res.json.total_created_clients).toEqual([
      {
        client_id: withData.client_id,
        data: {
          razao: 'Maria da Silva',
          cnpj_cpf: '529.982.247-25',
          endereco: 'Rua das Flores',
          numero: '123',
          bairro: 'Centro',
          cidade: 'São Paulo',
          uf: 'SP',
          cep: '01310-100',
          complemento: 'Apto 4',
          fone: '1133334444',
          telefone_celular: '11999998888',
          email: 'maria@example.com',
        },
      },
      { client_id: withoutData.client_id },
      { client_id: flagAbsent.client_id },
    ]);
  });

  it('does not change an already registered client and lists it apart, repeats in one batch included', async () => {
    const original = clientPayload();
    expect((await tenant.api.postIdempotent('/api/v1/clients', [original])).status).toBe(201);
    const fresh = clientPayload();
    const res = await tenant.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [
      { ...original, name: 'Changed Name', return_client_data: true },
      fresh,
      { ...fresh, name: 'Repeated in the batch' },
    ]);
    expect(res.status).toBe(201);
    expect(res.json.total_created_clients).toEqual([{ client_id: fresh.client_id }]);
    expect(res.json.clients_already_registered).toEqual([
      { client_id: original.client_id },
      { client_id: fresh.client_id },
    ]);
    const rows = await queryRows<{ name: string }>(
      system.databaseUrl,
      'select name from clients.clients where tenant_id = $1 and client_id = any($2::uuid[]) order by name',
      [tenant.tenantId, [original.client_id, fresh.client_id]],
    );
    expect(rows.map((r) => r.name)).toEqual(['Maria da Silva', 'Maria da Silva']);
  });

  it('answers 201 with empty created list when every client was already registered', async () => {
    const c = clientPayload();
    await tenant.api.postIdempotent('/api/v1/clients', [c]);
    const res = await tenant.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [c]);
    expect(res.status).toBe(201);
    expect(res.json.total_created_clients).toEqual([]);
    expect(res.json.clients_already_registered).toEqual([{ client_id: c.client_id }]);
  });

  it('rejects the whole batch when one item is invalid, naming the field by index, and stores nothing', async () => {
    const t = await system.newTenant();
    const res = await t.api.postIdempotent<Problem>('/api/v1/clients', [
      clientPayload(),
      clientPayload({ cnpj_cpf: '529.982.247-24' }),
      clientPayload(),
    ]);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.json.code).toBe('validation_failed');
    expect(res.json.errors).toEqual([{ path: '/1/cnpj_cpf', message: expect.stringMatching(/CPF or CNPJ/) }]);
    expect(await countClients(system.databaseUrl, t.tenantId)).toBe(0);
  });

  it('names every bad field of every item', async () => {
    const res = await tenant.api.postIdempotent<Problem>('/api/v1/clients', [
      {
        client_id: 'not-a-uuid',
        name: '',
        cnpj_cpf: '11.222.333/0001-82',
        state: 'XX',
        email: 'nope',
        zip_code: '123',
        telephone: '(11) 3333-4444',
      },
      clientPayload({ name: 'x'.repeat(256), phone_number: 12345678 }),
      { name: 'No id nor tax id' },
    ]);
    expect(res.status).toBe(422);
    const paths = res.json.errors!.map((e) => e.path).sort();
    expect(paths).toEqual(
      [
        '/0/client_id',
        '/0/name',
        '/0/cnpj_cpf',
        '/0/state',
        '/0/email',
        '/0/zip_code',
        '/0/telephone',
        '/1/name',
        '/1/phone_number',
        '/2/client_id',
        '/2/cnpj_cpf',
      ].sort(),
    );
  });

  it('rejects invalid CPFs and CNPJs, accepts valid ones with or without punctuation', async () => {
    for (const bad of [
      '111.111.111-11',
      '52998224724',
      '11.222.333/0001-80',
      '12.ABC.345/01DE-36',
      '529.982.247',
      'abc',
    ]) {
      const res = await tenant.api.postIdempotent<Problem>('/api/v1/clients', [clientPayload({ cnpj_cpf: bad })]);
      expect({ bad, status: res.status, path: res.json.errors?.[0]?.path }).toEqual({
        bad,
        status: 422,
        path: '/0/cnpj_cpf',
      });
    }
    for (const good of ['52998224725', '11222333000181', '12ABC34501DE35']) {
      const res = await tenant.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [
        clientPayload({ cnpj_cpf: good, return_client_data: true }),
      ]);
      expect(res.status).toBe(201);
      expect(res.json.total_created_clients[0].data?.cnpj_cpf).toBe(good);
    }
  });

  it('ignores unknown fields: accepted, neither stored nor returned', async () => {
    const res = await tenant.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [
      { ...clientPayload({ return_client_data: true }), favourite_colour: 'blue' },
    ]);
    expect(res.status).toBe(201);
    expect(res.json.total_created_clients[0].data).not.toHaveProperty('favourite_colour');
  });

  it('accepts null and empty optional fields', async () => {
    const res = await tenant.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [
      clientPayload({ email: '', complement: null, state: null, return_client_data: true }),
    ]);
    expect(res.status).toBe(201);
    expect(res.json.total_created_clients[0].data).toMatchObject({ email: '', complemento: null, uf: null });
  });

  it('refuses bodies of the wrong shape, size or type', async () => {
    const cases: Array<[string, () => Promise<{ status: number; json: unknown; headers: Headers }>, number, string]> = [
      ['empty array', () => tenant.api.postIdempotent('/api/v1/clients', []), 422, 'validation_failed'],
      [
        'an object instead of an array',
        () => tenant.api.postIdempotent('/api/v1/clients', clientPayload()),
        422,
        'validation_failed',
      ],
      [
        'malformed JSON',
        () => tenant.api.post('/api/v1/clients', '[{"client_id": ', { 'idempotency-key': randomUUID() }),
        400,
        'malformed_json',
      ],
      [
        'a JSON string',
        () => tenant.api.post('/api/v1/clients', '"hello"', { 'idempotency-key': randomUUID() }),
        400,
        'malformed_json',
      ],
      [
        'text/plain',
        () =>
          tenant.api.post('/api/v1/clients', JSON.stringify([clientPayload()]), {
            'idempotency-key': randomUUID(),
            'content-type': 'text/plain',
          }),
        415,
        'unsupported_media_type',
      ],
      [
        '1,001 items',
        () =>
          tenant.api.postIdempotent(
            '/api/v1/clients',
            Array.from({ length: 1001 }, () => clientPayload()),
          ),
        413,
        'payload_too_large',
      ],
      [
        'a body over 1 MiB',
        () => tenant.api.postIdempotent('/api/v1/clients', [clientPayload({ name: 'x'.repeat(1024 * 1024) })]),
        413,
        'payload_too_large',
      ],
    ];
    for (const [label, send, status, code] of cases) {
      const res = await send();
      expect({ label, status: res.status, code: (res.json as Problem | undefined)?.code }).toEqual({
        label,
        status,
        code,
      });
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('takes a full batch of 1,000 clients close to 1 MiB whose answer goes over the bus by claim check', async () => {
    const t = await system.newTenant();
    const long = (n: number) => 'a'.repeat(n);
    const batch = Array.from({ length: 1000 }, () =>
      clientPayload({
        address: long(200),
        neighborhood: long(150),
        complement: long(200),
        city: long(150),
        return_client_data: true,
      }),
    );
    const body = JSON.stringify(batch);
    expect(body.length).toBeGreaterThan(900_000);
    expect(body.length).toBeLessThan(1024 * 1024);
    const res = await t.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', body);
    expect(res.status).toBe(201);
    // Above the bus's single-message threshold (max_payload 1 MiB minus 64 KiB): sent by claim check.
    expect(res.text.length).toBeGreaterThan(1024 * 1024 - 64 * 1024);
    expect(res.json.total_created_clients).toHaveLength(1000);
    expect(res.json.total_created_clients[999].data?.endereco).toBe(long(200));
    expect(await countClients(system.databaseUrl, t.tenantId)).toBe(1000);
  });
});

describe('PUT /api/v1/clients/{uuid}', () => {
  it('replaces the client details and answers the data with Portuguese keys', async () => {
    const c = clientPayload();
    await tenant.api.postIdempotent('/api/v1/clients', [c]);
    const res = await tenant.api.put(
      `/api/v1/clients/${c.client_id}`,
      { name: 'Maria Souza', cnpj_cpf: VALID_CNPJ, city: 'Campinas', state: 'SP' },
      { 'idempotency-key': randomUUID() },
    );
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: 'success',
      message: expect.any(String),
      data: {
        razao: 'Maria Souza',
        cnpj_cpf: VALID_CNPJ,
        endereco: null,
        numero: null,
        bairro: null,
        cidade: 'Campinas',
        uf: 'SP',
        cep: null,
        complemento: null,
        fone: null,
        telefone_celular: null,
        email: null,
      },
    });
  });

  it('answers 404 for an unknown client', async () => {
    const res = await tenant.api.put(
      `/api/v1/clients/${randomUUID()}`,
      { name: 'X', cnpj_cpf: VALID_CNPJ },
      { 'idempotency-key': randomUUID() },
    );
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ code: 'not_found', status: 404 });
  });

  it("keeps tenants apart: A cannot update B's client (404), and both may use the same client_id", async () => {
    const a = await system.newTenant('A');
    const b = await system.newTenant('B');
    const shared = clientPayload();
    expect((await b.api.postIdempotent('/api/v1/clients', [shared])).status).toBe(201);
    const attack = await a.api.put(
      `/api/v1/clients/${shared.client_id}`,
      { name: 'Hijacked', cnpj_cpf: VALID_CNPJ },
      { 'idempotency-key': randomUUID() },
    );
    expect(attack.status).toBe(404);
    const rowsB = await queryRows<{ name: string }>(
      system.databaseUrl,
      'select name from clients.clients where tenant_id = $1 and client_id = $2',
      [b.tenantId, shared.client_id],
    );
    expect(rowsB).toEqual([{ name: 'Maria da Silva' }]);
    const sameIdInA = await a.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [
      { ...shared, name: 'Other person' },
    ]);
    expect(sameIdInA.json.total_created_clients).toEqual([{ client_id: shared.client_id }]);
    expect(await countClients(system.databaseUrl, a.tenantId)).toBe(1);
  });

  it('validates the path id and the body, naming the fields', async () => {
    const badPath = await tenant.api.put(
      '/api/v1/clients/123',
      { name: 'X', cnpj_cpf: VALID_CNPJ },
      { 'idempotency-key': randomUUID() },
    );
    expect(badPath.status).toBe(422);
    expect(badPath.json).toMatchObject({ errors: [{ in: 'path', path: 'uuid' }] });
    const badBody = await tenant.api.put<Problem>(
      `/api/v1/clients/${randomUUID()}`,
      { cnpj_cpf: '1', email: 'x@' },
      { 'idempotency-key': randomUUID() },
    );
    expect(badBody.status).toBe(422);
    expect(badBody.json.errors!.map((e) => e.path).sort()).toEqual(['/cnpj_cpf', '/email', '/name']);
  });
});

describe('unknown routes and methods', () => {
  it('answers problem+json 404 and 405', async () => {
    const missing = await tenant.api.post('/api/v1/nothing-here', {});
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    const wrongMethod = await tenant.api.send('DELETE', '/api/v1/clients');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('rate limit', () => {
  let limited: TestSystem;
  beforeAll(async () => {
    limited = await startSystem({ env: { RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '3' } });
  });
  afterAll(async () => {
    await limited?.stop();
  });

  it('answers 429 with Retry-After once a tenant goes over its limit, and not for another tenant', async () => {
    const busy = await limited.newTenant('busy');
    const calm = await limited.newTenant('calm');
    const results = await Promise.all(
      Array.from({ length: 12 }, () => busy.api.postIdempotent('/api/v1/clients', [clientPayload()])),
    );
    const limitedOnes = results.filter((r) => r.status === 429);
    expect(limitedOnes.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.status === 201).length).toBeGreaterThan(0);
    expect(Number(limitedOnes[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limitedOnes[0].json).toMatchObject({ code: 'rate_limited', status: 429 });
    expect((await calm.api.postIdempotent('/api/v1/clients', [clientPayload()])).status).toBe(201);
  });

  it('counts charges, not requests: a batch of 5 is more than a burst of 3, and nothing is kept of it', async () => {
    const tenant = await limited.newTenant('batch');
    const key = randomUUID();
    const batch = Array.from({ length: 5 }, () => receivablePayload(randomUUID(), 'https://erp.example.com/cb'));
    const res = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', batch, key);
    expect(res.status).toBe(429);
    expect(res.json).toMatchObject({
      code: 'rate_limited',
      detail: 'this request carries 5 charges, more than the 3 a tenant may send at once; split it',
    });
    expect(
      await queryRows(limited.databaseUrl, 'select 1 from gateway.idempotency_keys where tenant_id = $1 and key = $2', [
        tenant.tenantId,
        key,
      ]),
    ).toEqual([]);
  });
});
