// Splits the e2e files into shards of about equal running time, so e2e's test target can run two
// jest processes side by side (project.json): files run one at a time within a shard, and the
// 2-core CI machine carries two systems at once instead of one. Jest's own --shard splits by a hash
// of the path, which put the two longest files (chaos, fuzz) in one shard in a trial; this assigns
// the longest first to the shard with the least time so far (LPT), from the seconds below.
const Sequencer = require('@jest/test-sequencer').default;
const { basename } = require('node:path');

// Seconds per file in a CI run (2026-11-28, two shards beside the unit tests). Files not listed
// count as DEFAULT_SECONDS; only the long ones matter for the balance, and a stale figure costs
// balance, never correctness.
const SECONDS = {
  'inter-money-chaos.test.ts': 199,
  'chaos.test.ts': 106,
  'previous-release.test.ts': 99,
  'start-script.test.ts': 98,
  'fuzz.test.ts': 91,
  'app-startup-errors.test.ts': 88,
  'provider-accounts-cli.test.ts': 84,
  'admin-cli.test.ts': 79,
  'inter-provider.test.ts': 78,
  'bus-stream-permissions.test.ts': 73,
  'pix-money-chaos.test.ts': 71,
  'dead-letters.test.ts': 54,
  'console-tenant.test.ts': 50,
  'admin-fuzz.test.ts': 46,
  'readme-inter.test.ts': 44,
  'readme-pix.test.ts': 43,
  'console-operator.test.ts': 36,
  'tenant-beneficiaries.test.ts': 33,
  'inter-intake-and-waits.test.ts': 30,
  'receivables.test.ts': 29,
  'callbacks-crash.test.ts': 27,
  'sensitive-data.test.ts': 26,
  'receivables-crash.test.ts': 24,
  'nats-restart.test.ts': 24,
  'built-system.test.ts': 20,
  'accepted-promises.test.ts': 20,
  'bus-permissions.test.ts': 19,
  'hostile-receivers.test.ts': 19,
  'callbacks.test.ts': 19,
  'secret-rotation.test.ts': 18,
  'sdk.test.ts': 17,
  'sdk-package.test.ts': 65,
  'callback-url-safety.test.ts': 17,
  'postgres-outage.test.ts': 16,
  'idempotency.test.ts': 15,
  'pix-charges.test.ts': 15,
  'booklets-pix.test.ts': 15,
  'booklets-failure.test.ts': 14,
  'tracing.test.ts': 13,
};
const DEFAULT_SECONDS = 8;

const secondsOf = (test) => SECONDS[basename(test.path)] ?? DEFAULT_SECONDS;

class DurationShardSequencer extends Sequencer {
  shard(tests, { shardIndex, shardCount }) {
    this.shardIndex = shardIndex;
    const load = new Array(shardCount).fill(0);
    const picked = [];
    const longestFirst = [...tests].sort((a, b) => secondsOf(b) - secondsOf(a) || (a.path < b.path ? -1 : 1));
    for (const test of longestFirst) {
      const shard = load.indexOf(Math.min(...load));
      load[shard] += secondsOf(test);
      if (shard === shardIndex - 1) picked.push(test);
    }
    return picked;
  }

  // The first shard runs its longest files first, the others theirs last: the heaviest files (chaos
  // with its 11 processes, fuzz) do not run at the same time, which starved fuzz of its request
  // quota in a trial. A shard's total time is the same in any order.
  sort(tests) {
    const longestFirst = [...tests].sort((a, b) => secondsOf(b) - secondsOf(a) || (a.path < b.path ? -1 : 1));
    return this.shardIndex > 1 ? longestFirst.reverse() : longestFirst;
  }
}

module.exports = DurationShardSequencer;
