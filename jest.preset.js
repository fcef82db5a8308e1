// Shared jest setup: TypeScript through swc (no type check here; `typecheck` targets do that),
// and the ESM-only packages (jose, ky, unpdf's PDF.js bundle) let through the transform so CommonJS tests
// can load them.
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.((t|j)sx?|mjs)$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(jose|ky|unpdf)/)'],
  testMatch: ['**/?(*.)test.ts'],
  testTimeout: 30000,
};
