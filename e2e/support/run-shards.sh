#!/usr/bin/env bash
# Runs the e2e suites as two jest shards side by side (shard-sequencer.js balances them) and waits for
# both: nx's parallel run-commands stops the other shard as soon as one fails, which hid the rest of
# its results in CI. Exits non-zero if either shard failed. Extra arguments go to both jest runs.
set -u
# The apps start from the bundles nx built before this target (libs/test-support/src/app-entry.ts).
export TEST_APPS_FROM_DIST=true
# Every system copies one migrated database instead of migrating its own (support/template-database.ts).
TEST_TEMPLATE_DATABASE=$(node --import tsx support/template-database.ts create) || exit 1
export TEST_TEMPLATE_DATABASE
trap 'node --import tsx support/template-database.ts drop "$TEST_TEMPLATE_DATABASE"' EXIT
jest --shard=1/2 "$@" &
first=$!
jest --shard=2/2 "$@"
second=$?
wait "$first"
first=$?
[ "$first" -eq 0 ] && [ "$second" -eq 0 ]
