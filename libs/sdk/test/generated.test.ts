import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const sdkRoot = join(__dirname, '..');
const generatedDir = join(sdkRoot, 'src', 'generated');

// Each check starts tsx and openapi-typescript (about 6 s here); leave room for a busy CI machine.
jest.setTimeout(120_000);

/** Runs scripts/generate.ts --check as CI does (tsx, in its own process: openapi-typescript needs ESM). */
function check(dir: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/generate.ts', '--check', '--dir', dir],
      { cwd: sdkRoot, timeout: 100_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

// The committed document and types are what libs/contracts generates today: a document change without
// `npm run generate -w @payments/sdk` fails here, and one that breaks the SDK's use of the types fails
// its typecheck.
it('src/generated/ holds the OpenAPI document of libs/contracts and its types, as generated now', async () => {
  const { code, output } = await check(generatedDir);
  expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('matches the OpenAPI document') });
  const document = JSON.parse(readFileSync(join(generatedDir, 'openapi.json'), 'utf8')) as { openapi: string };
  expect(document.openapi).toMatch(/^3\.1\./);
});

it('the check fails, naming the file, when the types differ from the document', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-generated-'));
  try {
    cpSync(generatedDir, dir, { recursive: true });
    const types = readFileSync(join(dir, 'openapi.ts'), 'utf8');
    writeFileSync(join(dir, 'openapi.ts'), types.replace('access_token: string;', 'access_token: number;'));
    const { code, output } = await check(dir);
    expect(code).toBe(1);
    expect(output).toContain(`${join(dir, 'openapi.ts')} differs from the OpenAPI document`);
    expect(output).not.toContain('openapi.json differs');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
