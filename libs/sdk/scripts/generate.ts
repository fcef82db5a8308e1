/**
 * `npm run generate -w @payments/sdk`: writes the OpenAPI document of libs/contracts and its
 * TypeScript types into src/generated/ (or the folder after --dir). With --check it writes nothing
 * and exits 1, naming the files, when those in the folder differ from what the document generates.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DOCUMENT_NAME, GENERATED_DIR, readCommitted, renderGenerated, TYPES_NAME } from './codegen';

async function main(args: string[]): Promise<number> {
  const dirAt = args.indexOf('--dir');
  const dir = dirAt >= 0 && args[dirAt + 1] ? args[dirAt + 1]! : GENERATED_DIR;
  const fresh = await renderGenerated();
  if (args.includes('--check')) {
    const found = await readCommitted(dir).catch(() => ({ document: '', types: '' }));
    const stale = [
      found.document === fresh.document ? undefined : join(dir, DOCUMENT_NAME),
      found.types === fresh.types ? undefined : join(dir, TYPES_NAME),
    ].filter((file): file is string => file !== undefined);
    for (const file of stale)
      console.error(`${file} differs from the OpenAPI document: run npm run generate -w @payments/sdk`);
    if (stale.length === 0) console.log(`${dir} matches the OpenAPI document`);
    return stale.length === 0 ? 0 : 1;
  }
  await writeFile(join(dir, DOCUMENT_NAME), fresh.document);
  await writeFile(join(dir, TYPES_NAME), fresh.types);
  console.log(`wrote ${DOCUMENT_NAME} and ${TYPES_NAME} in ${dir}`);
  return 0;
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
