/**
 * `npx tsx scripts/apply-fixes.ts <upstream openapi.yaml>` in libs/pix-api: writes openapi/openapi.yaml as
 * the upstream document with the fixes of openapi/FIXES.md applied. The upstream file is
 * `openapi.yaml` of https://github.com/bacen/pix-api at the commit FIXES.md names.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyFixes, fixBlocks, gitBlobId } from './fixes';
import { PIX_STANDARD_SOURCE } from '../src/version';

async function main(args: string[]): Promise<number> {
  const upstreamPath = args[0];
  if (!upstreamPath) {
    console.error('usage: tsx scripts/apply-fixes.ts <upstream openapi.yaml>');
    return 2;
  }
  const upstream = await readFile(upstreamPath, 'utf8');
  if (gitBlobId(upstream) !== PIX_STANDARD_SOURCE.blob) {
    console.error(`${upstreamPath} is not the upstream file of ${PIX_STANDARD_SOURCE.commit}`);
    return 1;
  }
  const ours = applyFixes(upstream, fixBlocks(), 'forwards');
  await writeFile(join(__dirname, '..', 'openapi', 'openapi.yaml'), ours);
  console.log('wrote openapi/openapi.yaml');
  return 0;
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
