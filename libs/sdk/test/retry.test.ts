import { retryAfterMs, retryingFetch } from '../src/retry';

describe('retryAfterMs', () => {
  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-11-26T12:00:00Z');
    expect(retryAfterMs('5', now)).toBe(5000);
    expect(retryAfterMs('Thu, 26 Nov 2026 12:00:03 GMT', now)).toBe(3000);
    expect(retryAfterMs('Thu, 26 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });
});

describe('retryingFetch', () => {
  const answers = (...statuses: Array<[number, string?]>) => {
    const seen: Array<{ key: string | null; body: string }> = [];
    const inner = async (request: Request) => {
      seen.push({ key: request.headers.get('idempotency-key'), body: await request.text() });
      const [status, retryAfter] = statuses[Math.min(seen.length - 1, statuses.length - 1)]!;
      return new Response('{}', { status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } });
    };
    return { seen, inner };
  };
  const request = () =>
    new Request('http://gateway.test/api/v1/clients', {
      method: 'POST',
      headers: { 'idempotency-key': 'k-1' },
      body: '[{"a":1}]',
    });

  it('sends the same request again after each Retry-After, up to maxAttempts', async () => {
    const waits: number[] = [];
    const { seen, inner } = answers([429, '2'], [503, '1'], [201]);
    const fetch = retryingFetch({ maxAttempts: 3, sleep: async (ms) => void waits.push(ms) }, inner);
    expect((await fetch(request())).status).toBe(201);
    expect(waits).toEqual([2000, 1000]);
    expect(seen).toEqual(Array(3).fill({ key: 'k-1', body: '[{"a":1}]' }));
  });

  it('stops at maxAttempts, backs off without Retry-After, and gives up on a wait above maxDelayMs', async () => {
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms);
    const busy = answers([503]);
    expect((await retryingFetch({ maxAttempts: 3, baseDelayMs: 100, sleep }, busy.inner)(request())).status).toBe(503);
    expect(busy.seen).toHaveLength(3);
    expect(waits).toEqual([100, 200]);

    const far = answers([429, '120']);
    expect((await retryingFetch({ maxDelayMs: 30_000, sleep }, far.inner)(request())).status).toBe(429);
    expect(far.seen).toHaveLength(1);
  });

  it('does not retry other statuses', async () => {
    const { seen, inner } = answers([500, '1']);
    expect((await retryingFetch({}, inner)(request())).status).toBe(500);
    expect(seen).toHaveLength(1);
  });
});
