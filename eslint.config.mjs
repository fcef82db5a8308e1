// ESLint for the whole workspace. Each project's `lint` target runs `eslint .` in its folder with this
// file (see its project.json); `npm run lint` runs them all through Nx.
//
// Two rules carry the architecture:
// - @nx/enforce-module-boundaries, driven by the tags in each project.json: apps import libs only (no
//   app imports another app), libs import libs only, e2e/bench/scripts may import apps and libs (and e2e
//   the scripts it tests).
// - no-restricted-imports in apps/*/src/domain: the domain imports no transport, driver or telemetry
//   package; those live in the service's transport layer, behind ports the domain defines.
import { defineConfig } from 'eslint/config';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier/flat';

const DOMAIN_RULE =
  "domain layering: a service's src/domain/ imports no transport, driver or telemetry package " +
  '(nats, undici, koa, @koa/*, pg, @opentelemetry/*, @payments/bus, @payments/telemetry, @payments/db). ' +
  "Put such code in the service's transport layer (src/transport/) or its stores (src/db/) behind a " +
  "port the domain defines, as callback-svc's HttpDelivery and DeliveryTracing are. kysely's query builder is fine here.";

export default defineConfig(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '**/coverage/**', '.nx/**', 'tmp/**', 'demo-output/**', '.data/**'],
  },
  {
    files: ['**/*.{ts,tsx,mts,cts,js,mjs,cjs}'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Unused names are a type-check error already (noUnusedLocals); `_`-prefixed ones are deliberate.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Sources only: the jest configs reach the workspace's jest.preset.js by a relative path, which is no project.
    files: ['**/*.{ts,tsx}'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          // e2e, bench and scripts start the apps in-process (e2e/support/system.ts, scripts/start.ts).
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            // e2e also checks the settings npm start and the demo read (configuration-reference.test.ts).
            { sourceTag: 'type:test', onlyDependOnLibsWithTags: ['type:app', 'type:lib', 'type:tool'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:app', 'type:lib'] },
          ],
        },
      ],
    },
  },
  {
    // The jest configs are CommonJS scripts run by Node.
    files: ['**/*.{js,cjs}'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['apps/*/src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'kysely',
              importNames: ['PostgresDialect', 'PostgresDriver', 'Migrator', 'FileMigrationProvider'],
              message: `${DOMAIN_RULE} (Dialects and the migrator are wiring: src/db/ and service.ts.)`,
            },
          ],
          patterns: [
            {
              group: [
                'nats',
                'nats/**',
                'undici',
                'undici/**',
                'koa',
                'koa/**',
                'koa-*',
                '@koa/**',
                'pg',
                'pg/**',
                'pg-*',
                '@opentelemetry/**',
                '@payments/bus',
                '@payments/bus/**',
                '@payments/telemetry',
                '@payments/telemetry/**',
                '@payments/db',
                '@payments/db/**',
              ],
              message: DOMAIN_RULE,
            },
            {
              // The domain writes to the outbox in its own transaction; relaying it to the bus is transport.
              group: ['@payments/outbox'],
              importNames: ['OutboxRelay', 'outboxBacklog'],
              message: DOMAIN_RULE,
            },
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  prettier,
);
