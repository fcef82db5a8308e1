import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { definitionsOf, readDocument } from '../scripts/codegen';
import { standardDefinitions } from '../src/generated/standard-schemas';
import { standardSchemas, standardViolations } from '../src';

const root = join(__dirname, '..');

/** Runs scripts/generate.ts --check in its own process (prettier needs ESM, which jest's CommonJS lacks). */
function check(): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/generate.ts', '--check'],
      { cwd: root },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

describe('the generated schemas', () => {
  it('hold what the document generates today', async () => {
    expect(standardDefinitions).toEqual(definitionsOf(await readDocument()));
  });

  it('are committed exactly as the generator writes them (run `npx tsx scripts/generate.ts`)', async () => {
    const { code, output } = await check();
    expect([code, output]).toEqual([0, expect.stringContaining('matches openapi/openapi.yaml')]);
  }, 60_000);

  it("hold every schema of the document's components and the inline notice body", () => {
    for (const name of ['CobVSolicitada', 'CobVCompleta', 'Pix', 'PixConsultados', 'Devolucao', 'Problema']) {
      expect(standardSchemas).toHaveProperty(name);
    }
    expect(standardViolations('WebhookPixBody', { pix: [] })).toEqual([]);
    expect(() => standardViolations('NoSuchSchema', {})).toThrow(TypeError);
  });
});
