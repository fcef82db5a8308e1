import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * The node arguments that start an app: its bundle under dist/ when TEST_APPS_FROM_DIST is `true`
 * and the bundle exists, else its source. The whole e2e run (e2e/support/run-shards.sh) builds every
 * app first and sets it: the apps start from their esbuild bundles, as the container images run
 * them, instead of compiling their sources with tsx at each start. A bundle loads in about half the
 * time (CONTRIBUTING.md, Test), and the suite starts a few hundred app processes. A single test file
 * run by hand keeps tsx, so an edited source is what runs without a build.
 */
export function appEntry(app: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const bundle = join(ROOT, 'dist', 'apps', app, 'main.js');
  if (env.TEST_APPS_FROM_DIST === 'true' && existsSync(bundle)) return [bundle];
  return ['--import', 'tsx', join(ROOT, 'apps', app, 'src', 'main.ts')];
}
