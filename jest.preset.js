// Shared jest setup: TypeScript through swc (no type check here; `typecheck` targets do that),
// and the ESM-only packages (jose, ky, unpdf's PDF.js bundle) let through the transform so CommonJS tests
// can load them.
module.exports = {
  testEnvironment: 'node',
  transform: {
    // apps/console's Preact components (server-rendered JSX, preact's automatic runtime).
    '^.+\\.tsx$': [
      '@swc/jest',
      {
        jsc: {
          target: 'es2022',
          parser: { syntax: 'typescript', tsx: true },
          transform: { react: { runtime: 'automatic', importSource: 'preact' } },
        },
        module: { type: 'commonjs' },
      },
    ],
    '^.+\\.((t|j)sx?|mjs)$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(jose|ky|unpdf)/)'],
  testMatch: ['**/?(*.)test.ts'],
  testTimeout: 30000,
};
