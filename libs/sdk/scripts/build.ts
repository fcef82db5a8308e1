/**
 * Builds the package into dist/: one ESM and one CommonJS bundle (esbuild; openapi-fetch and its
 * helpers bundled in, so the package has no dependencies and installs offline), declarations by tsc
 * with the types of those two bundled libraries copied beside them, and their licences.
 *
 * `--pack` (the prepack script) also swaps in the published package.json, whose `exports` name dist/;
 * `--unpack` (postpack) puts the workspace's back. Inside this repository the package stays what it
 * was (`main` at src/index.ts), so jest, tsx, tsc and the console's build read the sources unbuilt.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build, type BuildOptions } from 'esbuild';

const root = join(__dirname, '..');
const dist = join(root, 'dist');
const types = join(dist, 'types');
const manifestPath = join(root, 'package.json');
/** The workspace package.json while the published one stands in for it (between prepack and postpack). */
const savedManifestPath = join(root, '.package.workspace.json');

/** Libraries bundled into dist/: their declarations and licences ship with it. */
const BUNDLED = ['openapi-fetch', 'openapi-typescript-helpers'] as const;

interface Manifest {
  name: string;
  version: string;
  description?: string;
  [field: string]: unknown;
}

async function bundle(): Promise<void> {
  const common: BuildOptions = {
    entryPoints: [join(root, 'src', 'index.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    legalComments: 'inline',
    logLevel: 'warning',
  };
  await build({ ...common, format: 'esm', outfile: join(dist, 'index.mjs') });
  await build({ ...common, format: 'cjs', outfile: join(dist, 'index.cjs') });
}

function declarations(): void {
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  const vendor = join(types, 'vendor');
  mkdirSync(vendor, { recursive: true });
  for (const name of BUNDLED) {
    const from = join(dirname(require.resolve(`${name}/package.json`)), 'dist', 'index.d.ts');
    writeFileSync(join(vendor, `${name}.d.ts`), pointAtVendor(readFileSync(from, 'utf8'), vendor, vendor));
  }
  for (const file of declarationFiles(types).filter((f) => !f.startsWith(vendor)))
    writeFileSync(file, pointAtVendor(readFileSync(file, 'utf8'), dirname(file), vendor));
  // ESM consumers get an ES module's declarations; they are those of the CommonJS build.
  writeFileSync(join(dist, 'index.d.mts'), "export * from './types/index.js';\n");
  writeFileSync(join(dist, 'index.d.cts'), "export * from './types/index';\n");
}

/** Rewrites `from 'openapi-fetch'` (and its helpers) to the copies in dist/types/vendor. */
function pointAtVendor(source: string, from: string, vendor: string): string {
  return BUNDLED.reduce((text, name) => {
    const target = relative(from, join(vendor, name));
    const specifier = target.startsWith('.') ? target : `./${target}`;
    return text.replaceAll(`from '${name}'`, `from '${specifier}'`).replaceAll(`from "${name}"`, `from "${specifier}"`);
  }, source);
}

function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? declarationFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

function licences(): void {
  const parts = BUNDLED.map((name) => {
    const text = readFileSync(join(dirname(require.resolve(`${name}/package.json`)), 'LICENSE'), 'utf8');
    return `## ${name}\n\n${text.trim()}\n`;
  });
  writeFileSync(join(dist, 'THIRD_PARTY_LICENSES.md'), `# Bundled into this package\n\n${parts.join('\n')}`);
}

/** What the tarball says of itself: the built files, no dependencies, no scripts. */
function published(workspace: Manifest): Manifest {
  return {
    name: workspace.name,
    version: workspace.version,
    description: workspace.description,
    license: 'UNLICENSED',
    engines: { node: '>=20.19' },
    sideEffects: false,
    main: './dist/index.cjs',
    module: './dist/index.mjs',
    types: './dist/types/index.d.ts',
    exports: {
      '.': {
        import: { types: './dist/index.d.mts', default: './dist/index.mjs' },
        require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
      },
      './package.json': './package.json',
    },
    files: ['dist', 'README.md'],
  };
}

function pack(): void {
  unpack(); // a pack that died half-way left the published manifest in place
  const workspace = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  renameSync(manifestPath, savedManifestPath);
  writeFileSync(manifestPath, `${JSON.stringify(published(workspace), null, 2)}\n`);
}

function unpack(): void {
  if (existsSync(savedManifestPath)) renameSync(savedManifestPath, manifestPath);
}

async function main(args: string[]): Promise<void> {
  if (args.includes('--unpack')) return unpack();
  rmSync(dist, { recursive: true, force: true });
  await bundle();
  declarations();
  licences();
  if (args.includes('--pack')) pack();
}

main(process.argv.slice(2)).catch((err: unknown) => {
  unpack();
  console.error(err);
  process.exit(1);
});
