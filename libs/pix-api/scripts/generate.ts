/**
 * `npx tsx scripts/generate.ts` in libs/pix-api: writes src/generated/standard-schemas.ts from
 * openapi/openapi.yaml. With --check it writes nothing and exits 1 when the committed file differs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { GENERATED_FILE, readDocument, renderGenerated } from './codegen';

async function main(args: string[]): Promise<number> {
  const fresh = await renderGenerated(await readDocument());
  if (args.includes('--check')) {
    const committed = await readFile(GENERATED_FILE, 'utf8').catch(() => '');
    if (committed === fresh) {
      console.log(`${GENERATED_FILE} matches openapi/openapi.yaml`);
      return 0;
    }
    console.error(`${GENERATED_FILE} differs from openapi/openapi.yaml: run npx tsx scripts/generate.ts`);
    return 1;
  }
  await writeFile(GENERATED_FILE, fresh);
  console.log(`wrote ${GENERATED_FILE}`);
  return 0;
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
