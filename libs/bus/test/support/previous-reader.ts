import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { Streams } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus } from '../../src';

/**
 * An instance of version N-1 (1.0) of the registration worker, in a process of its own: it reads the
 * registration stream with the 1.0 schema frozen in test-vectors/bus/1.0.schemas.json and knows
 * version 1.0 only. Each job it takes is printed as a JSON line; `ready` once it consumes; SIGTERM
 * stops it. Run by rolling-upgrade.test.ts (tsx), the bus prefix its argument.
 */
async function main(): Promise<void> {
  const frozen = JSON.parse(readFileSync(join(__dirname, '../../../../test-vectors/bus/1.0.schemas.json'), 'utf8')) as {
    schemas: Record<string, TSchema>;
  };
  const previous = {
    ...Streams.receivableRegistrations,
    messageSchema: frozen.schemas.registrations,
    version: { major: 1, minor: 0 },
  };
  const bus = await connectBus({
    url: 'nats://127.0.0.1:4222',
    prefix: process.argv[2],
    name: 'previous-reader',
    logger: createLogger('previous-reader', 'silent'),
  });
  const consumption = await bus.streams.consumeEach(previous, async (job) => {
    process.stdout.write(`${JSON.stringify(job)}\n`);
    return 'done';
  });
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void consumption
      .stop()
      .then(() => bus.close())
      .then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
