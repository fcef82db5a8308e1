import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderUnavailableError, type ChargeRequest } from '../src/domain/ports';
import { BankSandboxProvider } from '../src/transport/providers/bank-sandbox-provider';
import { LEGACY_SANDBOX_ACCOUNT } from '../src/transport/providers/legacy-account';

/**
 * How the sandbox adapter reads the bank's answers: a whole-request 400, 404 or 422
 * rejects every charge of the request with code provider_http_<status>; 401, 403, 408, 409, 429 and
 * 5xx leave them to be retried (ProviderUnavailableError). Per charge: 400, 404 and 422 reject it with
 * the bank's code; any other status leaves it to be retried. A real HTTP server answers.
 */

let server: Server;
let baseUrl: string;
/** What the server answers next: a status and a JSON body, or `raw` text instead. */
let answer: { status: number; body?: unknown; raw?: string } = { status: 200, body: {} };

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, { 'content-type': answer.raw ? 'text/plain' : 'application/json' });
      res.end(answer.raw ?? JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const provider = () => new BankSandboxProvider({ baseUrl, apiKey: 'k', timeoutMs: 5_000, retries: 0 });

const charge = (key: string): ChargeRequest => ({
  idempotencyKey: key,
  providerChargeId: null,
  createMarkedAt: null,
  kind: 'hybrid_slip',
  amountCents: 1_000,
  issueDate: '2026-01-01',
  dueDate: '2026-02-01',
  payer: {
    clientId: 'c',
    name: 'Maria',
    taxId: '52998224725',
    address: null,
    number: null,
    neighborhood: null,
    city: null,
    state: null,
    zipCode: null,
    email: null,
  },
  discount: null,
  fineBp: 0,
  interestPerDayCents: 0,
  instructions: [],
  descriptionLines: [],
  reference: 'r',
});

it.each([400, 404, 422])('a whole-request %i rejects every charge with provider_http_<status>', async (status) => {
  answer = { status, body: { error: { code: 'invalid_request', message: 'charges[0].amount is wrong' } } };
  const outcomes = await provider().registerMany(LEGACY_SANDBOX_ACCOUNT, [charge('a'), charge('b')]);
  expect(outcomes).toEqual([
    {
      kind: 'rejected',
      code: `provider_http_${status}`,
      message: `the provider refused the request (HTTP ${status}): invalid_request: charges[0].amount is wrong`,
    },
    {
      kind: 'rejected',
      code: `provider_http_${status}`,
      message: `the provider refused the request (HTTP ${status}): invalid_request: charges[0].amount is wrong`,
    },
  ]);
});

it('a whole-request refusal without a JSON body is still a rejection', async () => {
  answer = { status: 404, raw: 'no such route' };
  const [outcome] = await provider().registerMany(LEGACY_SANDBOX_ACCOUNT, [charge('a')]);
  expect(outcome).toEqual({
    kind: 'rejected',
    code: 'provider_http_404',
    message: 'the provider refused the request (HTTP 404)',
  });
});

it.each([401, 403, 408, 409, 429, 500, 502, 503])('a whole-request %i is retried, not a rejection', async (status) => {
  answer = { status, body: { error: { code: 'busy', message: 'later' } } };
  const attempt = provider().registerMany(LEGACY_SANDBOX_ACCOUNT, [charge('a')]);
  await expect(attempt).rejects.toBeInstanceOf(ProviderUnavailableError);
  await expect(attempt).rejects.toThrow(`provider answered HTTP ${status}`);
});

it('per charge: 422 rejects with the bank code, 429 and 409 are retried, 201 registers', async () => {
  const registered = {
    charge_id: 'ch1',
    our_number: '1',
    status: 'registered',
    paid_at: null,
    amount_paid_cents: null,
    fee_cents: null,
    method: null,
    barcode: null,
    typeable_line: null,
    pix_copy_and_paste: 'pix',
    qrcode_image_url: 'q',
    pdf_url: 'p',
  };
  answer = {
    status: 200,
    body: {
      results: [
        { status: 422, error: { code: 'charge_rejected', message: 'the bank refused to register this charge' } },
        { status: 429, error: { code: 'rate_limited', message: 'slow down' } },
        { status: 409 },
        { status: 201, charge: registered },
        { status: 400 },
      ],
    },
  };
  const outcomes = await provider().registerMany(
    LEGACY_SANDBOX_ACCOUNT,
    ['a', 'b', 'c', 'd', 'e'].map((k) => charge(k)),
  );
  expect(outcomes.map((o) => o.kind)).toEqual(['rejected', 'unavailable', 'unavailable', 'registered', 'rejected']);
  expect(outcomes[0]).toMatchObject({ code: 'charge_rejected', message: 'the bank refused to register this charge' });
  expect(outcomes[1]).toMatchObject({ reason: 'slow down' });
  expect(outcomes[2]).toMatchObject({ reason: 'the provider answered 409 for this charge' });
  expect(outcomes[4]).toMatchObject({ code: 'provider_http_400' });
});

describe('cancel', () => {
  it('is cancelled on 2xx, not_open on 409', async () => {
    answer = { status: 200, body: {} };
    expect(await provider().cancel(LEGACY_SANDBOX_ACCOUNT, 'ch_1', 'r')).toBe('cancelled');
    answer = { status: 409, body: { error: { code: 'not_open' } } };
    expect(await provider().cancel(LEGACY_SANDBOX_ACCOUNT, 'ch_1', 'r')).toBe('not_open');
  });

  it('is refused for good on 404 (the bank does not know the charge): no retry can help', async () => {
    answer = { status: 404, body: { error: { code: 'not_found' } } };
    expect(await provider().cancel(LEGACY_SANDBOX_ACCOUNT, 'ch_unknown', 'r')).toBe('refused');
  });

  it.each([401, 429, 503])('leaves a cancel answered %i to be retried', async (status) => {
    answer = { status, body: {} };
    await expect(provider().cancel(LEGACY_SANDBOX_ACCOUNT, 'ch_1', 'r')).rejects.toBeInstanceOf(
      ProviderUnavailableError,
    );
  });
});
