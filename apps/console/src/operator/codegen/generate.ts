/**
 * Writes the console's types of the admin API (src/operator/generated/admin-openapi.ts) from the
 * admin OpenAPI document of libs/contracts. With --check it writes nothing and exits 1 when the
 * file (or the one after --file) differs from what the document generates.
 */
import { writeFile } from 'node:fs/promises';
import { ADMIN_TYPES_FILE, readAdminTypes, renderAdminTypes } from './admin-types';

async function main(args: string[]): Promise<number> {
  const fileAt = args.indexOf('--file');
  const file = fileAt >= 0 && args[fileAt + 1] ? args[fileAt + 1]! : ADMIN_TYPES_FILE;
  const fresh = await renderAdminTypes();
  if (args.includes('--check')) {
    const found = await readAdminTypes(file).catch(() => '');
    if (found === fresh) {
      console.log(`${file} matches the admin OpenAPI document`);
      return 0;
    }
    console.error(
      `${file} differs from the admin OpenAPI document: run npx tsx apps/console/src/operator/codegen/generate.ts`,
    );
    return 1;
  }
  await writeFile(file, fresh);
  console.log(`wrote ${file}`);
  return 0;
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
