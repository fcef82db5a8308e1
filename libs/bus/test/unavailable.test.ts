import { createLogger } from '@payments/logger';
import { BusUnavailableError, checkBus, connectBus, displayNatsUrl } from '../src';
import { freePort } from './support/nats-servers';

const logger = createLogger('bus-test', 'silent');

it('connectBus to a NATS out of reach fails with one line naming the URL and the fix', async () => {
  const port = await freePort();
  const failure = await connectBus({ url: `nats://127.0.0.1:${port}`, prefix: 'tx', name: 'test', logger }).catch(
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(BusUnavailableError);
  expect(failure).toMatchObject({
    problem: 'unreachable',
    startupProblem: true,
    message: `cannot reach NATS at nats://127.0.0.1:${port} (connection refused): start nats-server -js or set NATS_URL`,
  });
});

it('checkBus passes against the real NATS (JetStream on) and names an unknown host', async () => {
  await expect(checkBus(process.env.NATS_URL ?? 'nats://127.0.0.1:4222')).resolves.toBeUndefined();
  await expect(checkBus('nats://no-such-host.invalid:4222')).rejects.toMatchObject({
    problem: 'unreachable',
    message:
      'cannot reach NATS at nats://no-such-host.invalid:4222 (host no-such-host.invalid not found): start nats-server -js or set NATS_URL',
  });
});

it('masks credentials in the URLs it prints', () => {
  expect(displayNatsUrl('nats://app:s3cret@nats:4222,nats://token@other:4222')).toBe(
    'nats://app:***@nats:4222,nats://***@other:4222',
  );
  expect(displayNatsUrl('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
});
