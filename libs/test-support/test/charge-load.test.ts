import { CallbackTally, rateLimitExcess, type Posting } from '../src/charge-load';

function posting(startedAt: number, accepted: Array<[number, number]>): Posting {
  return {
    startedAt,
    accepted: accepted.map(([at, size]) => ({ at, size, gateway: 'g' })),
    limited: 0,
    unavailable: 0,
    ids: [],
  };
}

describe('rateLimitExcess', () => {
  it('is 0 while acceptances stay within one bucket (burst, then the refill rate)', () => {
    // burst 400, 300/s: 400 at once, then 300 a second.
    const held = posting(0, [
      [100, 200],
      [120, 200],
      [1_200, 200],
      [2_000, 200],
      [2_100, 100],
    ]);
    expect(rateLimitExcess(held, 300, 400)).toBeLessThanOrEqual(0);
  });

  it('shows what two buckets (one per gateway) let through beyond one', () => {
    const twoBuckets = posting(0, [
      [100, 200],
      [110, 200],
      [120, 200],
      [130, 200],
    ]);
    expect(rateLimitExcess(twoBuckets, 300, 400)).toBeGreaterThan(350);
  });
});

describe('CallbackTally', () => {
  let tally: CallbackTally;
  beforeEach(async () => {
    tally = await new CallbackTally().start();
  });
  afterEach(() => tally.stop());

  const send = (id: string, body: object) =>
    fetch(tally.url, { method: 'POST', headers: { 'webhook-id': id }, body: JSON.stringify(body) }).then((r) =>
      r.text(),
    );

  it('counts distinct events per charge, re-sent deliveries and other callbacks apart', async () => {
    const registered = { type: 'registered', success: true, accounts_receivable_id: 'a' };
    await send('evt-1', registered);
    await send('evt-1', registered);
    await send('evt-2', registered);
    await send('evt-3', { type: 'cancelled', success: true, accounts_receivable_id: 'b' });
    expect(tally.requests).toBe(4);
    expect(tally.resent).toBe(1);
    expect(tally.events.size).toBe(3);
    expect([...tally.registered.get('a')!]).toEqual(['evt-1', 'evt-2']);
    expect(tally.unexpected).toHaveLength(1);
  });

  it('measures the longest gap between arrivals from a moment on', () => {
    tally.arrivals.push(1_000, 5_000, 6_000, 9_000);
    expect(tally.longestStallAfter(0)).toBe(4_000);
    expect(tally.longestStallAfter(4_500)).toBe(3_000);
  });
});
