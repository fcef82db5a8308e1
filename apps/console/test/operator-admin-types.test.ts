import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const consoleRoot = join(__dirname, '..');
const typesFile = join(consoleRoot, 'src', 'operator', 'generated', 'admin-openapi.ts');

// Each check starts tsx and openapi-typescript (a few seconds); leave room for a busy CI machine.
jest.setTimeout(120_000);

/** Runs the generator with --check in its own process (openapi-typescript is ESM, tsx loads it). */
function check(file: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/operator/codegen/generate.ts', '--check', '--file', file],
      { cwd: consoleRoot, timeout: 100_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

// The admin client's types are what the admin OpenAPI document of libs/contracts generates today: an
// admin API change without regenerating fails here, and one that breaks a page fails the typecheck.
it('src/operator/generated/admin-openapi.ts holds the types of the admin OpenAPI document, as generated now', async () => {
  const { code, output } = await check(typesFile);
  expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('matches the admin OpenAPI document') });
});

it('the check fails, naming the file and the command, when the types differ from the document', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-admin-types-'));
  try {
    const copy = join(dir, 'admin-openapi.ts');
    const types = readFileSync(typesFile, 'utf8');
    expect(types).toContain('active_tokens: number;');
    writeFileSync(copy, types.replace('active_tokens: number;', 'active_tokens: string;'));
    const { code, output } = await check(copy);
    expect(code).toBe(1);
    expect(output).toContain(`${copy} differs from the admin OpenAPI document`);
    expect(output).toContain('npx tsx apps/console/src/operator/codegen/generate.ts');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
