import { randomUUID } from 'node:crypto';
import { ServiceError, type ProviderAccountVersion } from '@payments/contracts';
import { acceptReceivables, acceptRequests } from '../src/domain/intake';
import type { ClientDirectory } from '../src/domain/ports';
import { accountVersion, chargeItem, startStateFixture, type StateFixture } from './state-fixture';

/**
 * What a PIX charge needs of the tenant's bank account, refused at intake with its own code and
 * nothing stored (docs/providers/pix.md): an `inter` account without a PIX key takes no PIX charge
 * (422 pix_key_required), a `pix` account takes nothing but PIX charges (422 slip_not_supported); each
 * refused item is named by `/<index>/payment_method`. In a coalesced batch, the refused request fails alone.
 */

let f: StateFixture;
beforeAll(async () => {
  f = await startStateFixture();
});
afterAll(async () => {
  await f?.stop();
});

const PIX = 3;
const SLIP = 1;

async function storedCount(tenantId: string): Promise<number> {
  const r = await f.db
    .selectFrom('receivables')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  return err as ServiceError;
}

function tenantWith(account: (tenantId: string) => ProviderAccountVersion) {
  const tenantId = randomUUID();
  return { tenantId, version: account(tenantId), clientId: f.clients.add(tenantId) };
}

it('an inter account without a PIX key: a PIX charge is 422 pix_key_required, nothing stored', async () => {
  const { tenantId, version, clientId } = tenantWith((t) => accountVersion(t, 'inter', { pix_key: null }));
  const items = [chargeItem(clientId, { payment_method: SLIP }), chargeItem(clientId, { payment_method: PIX })];
  const err = await refusal(acceptReceivables(f.db, f.clients, tenantId, version, items));
  expect(err.code).toBe('pix_key_required');
  expect(err.errors).toEqual([{ path: '/1/payment_method', message: expect.stringContaining('PIX key') }]);
  expect(await storedCount(tenantId)).toBe(0);
  // Its slips alone are taken, as before.
  expect(await acceptReceivables(f.db, f.clients, tenantId, version, [items[0]])).toEqual({
    created: 1,
    alreadyExisting: 0,
    existing: [],
  });
});

it('an inter account with a PIX key takes a PIX charge, its payer without the address a slip needs', async () => {
  const { tenantId, version, clientId } = tenantWith((t) => accountVersion(t, 'inter'));
  const withoutAddress: ClientDirectory = {
    find: async (tenant, ids) =>
      new Map(
        [...(await f.clients.find(tenant, ids))].map(([id, payer]) => [
          id,
          { ...payer, address: null, city: null, state: null, zipCode: null },
        ]),
      ),
  };
  const pix = chargeItem(clientId, { payment_method: PIX });
  expect(await acceptReceivables(f.db, withoutAddress, tenantId, version, [pix])).toEqual({
    created: 1,
    alreadyExisting: 0,
    existing: [],
  });
  const slip = chargeItem(clientId, { payment_method: SLIP });
  const err = await refusal(acceptReceivables(f.db, withoutAddress, tenantId, version, [slip]));
  expect(err.code).toBe('validation_failed');
  expect(err.errors?.[0]?.path).toBe('/0/client_id');
});

it('a pix account: a slip charge is 422 slip_not_supported, nothing stored; a PIX charge is taken', async () => {
  const { tenantId, version, clientId } = tenantWith((t) => accountVersion(t, 'pix'));
  const items = [
    chargeItem(clientId, { payment_method: PIX }),
    chargeItem(clientId, { payment_method: SLIP }),
    chargeItem(clientId, { payment_method: SLIP }),
  ];
  const err = await refusal(acceptReceivables(f.db, f.clients, tenantId, version, items));
  expect(err.code).toBe('slip_not_supported');
  expect(err.errors?.map((e) => e.path)).toEqual(['/1/payment_method', '/2/payment_method']);
  expect(await storedCount(tenantId)).toBe(0);
  expect(await acceptReceivables(f.db, f.clients, tenantId, version, [items[0]])).toEqual({
    created: 1,
    alreadyExisting: 0,
    existing: [],
  });
});

it('a pix account refuses a PIX charge due in the past, as the PIX API would', async () => {
  const { tenantId, version, clientId } = tenantWith((t) => accountVersion(t, 'pix'));
  const err = await refusal(
    acceptReceivables(f.db, f.clients, tenantId, version, [
      chargeItem(clientId, { payment_method: PIX, due_date: '2020-01-10', emission_date: '2020-01-01' }),
    ]),
  );
  expect(err.code).toBe('validation_failed');
  expect(err.errors?.map((e) => e.path)).toEqual(['/0/due_date']);
});

it('in a coalesced batch the refused request fails alone; the others are stored', async () => {
  const keyless = tenantWith((t) => accountVersion(t, 'inter', { pix_key: null }));
  const keyed = tenantWith((t) => accountVersion(t, 'inter'));
  const outcomes = await acceptRequests(f.db, f.clients, [
    {
      tenantId: keyed.tenantId,
      account: keyed.version,
      items: [chargeItem(keyed.clientId, { payment_method: PIX })],
    },
    {
      tenantId: keyless.tenantId,
      account: keyless.version,
      items: [chargeItem(keyless.clientId, { payment_method: PIX })],
    },
    {
      tenantId: keyless.tenantId,
      account: keyless.version,
      items: [chargeItem(keyless.clientId, { payment_method: SLIP })],
    },
  ]);
  expect(outcomes[0]).toEqual({ ok: true, value: { created: 1, alreadyExisting: 0, existing: [] } });
  expect(outcomes[1]).toMatchObject({ ok: false, error: { code: 'pix_key_required' } });
  expect(outcomes[2]).toEqual({ ok: true, value: { created: 1, alreadyExisting: 0, existing: [] } });
  expect(await storedCount(keyless.tenantId)).toBe(1);
});
