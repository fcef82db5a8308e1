import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PIX_STANDARD_SOURCE, standardViolations } from '../src';
import { definitionsOf } from '../scripts/codegen';
import { applyFixes, fixBlocks, FIXES_FILE, gitBlobId } from '../scripts/fixes';
import { DOCUMENT_TEXT, example } from './document';

const fixesText = readFileSync(FIXES_FILE, 'utf8');
const blocks = fixBlocks(fixesText);
const upstream = applyFixes(DOCUMENT_TEXT, blocks, 'backwards');

describe('our copy of the standard', () => {
  it('is the upstream file with the fixes of FIXES.md and nothing else', () => {
    expect(blocks.length).toBeGreaterThan(0);
    expect(gitBlobId(upstream)).toBe(PIX_STANDARD_SOURCE.blob);
    expect(applyFixes(upstream, blocks, 'forwards')).toBe(DOCUMENT_TEXT);
    expect(DOCUMENT_TEXT).not.toBe(upstream);
  });

  it('names in FIXES.md the commit and blob it comes from, and a heading for every fix', () => {
    expect(fixesText).toContain(PIX_STANDARD_SOURCE.commit);
    expect(fixesText).toContain(PIX_STANDARD_SOURCE.blob);
    const headings = new Set([...fixesText.matchAll(/^### ([A-Z]\d+)\./gm)].map((m) => m[1]));
    for (const block of blocks) expect(headings).toContain(/^[A-Z]\d+/.exec(block.id)?.[0]);
  });

  it('fixes the CPF pattern: a valid CPF passes, an invalid one fails; upstream refused every CPF', () => {
    const cobv = (cpf: string): unknown => ({
      calendario: { dataDeVencimento: '2026-12-10' },
      devedor: { cpf, nome: 'Francisco da Silva' },
      valor: { original: '10.00' },
      chave: 'a1f4102e-a446-4a57-bcce-6fa48899c1d1',
    });
    expect(standardViolations('CobVSolicitada', cobv('12345678909'))).toEqual([]);
    for (const wrong of ['1234567890', '123456789012', '123.456.789-09', '/12345678909/']) {
      expect(standardViolations('CobVSolicitada', cobv(wrong)).map((v) => v.path)).toContain('/devedor/cpf');
    }
    const upstreamValidate = compile(definitionsOf(upstream), 'CobVSolicitada');
    expect(upstreamValidate(cobv('12345678909'))).toBe(false);
  });

  it("validates the document's examples of the operations we use (each failed upstream or passes both)", () => {
    const cases: Array<[string, string]> = [
      ['CobVSolicitada', 'cobBody1'],
      ['CobVRevisada', 'cobBody3'],
      ['CobVRevisada', 'cobBody5'],
      ['CobVGerada', 'cobResponse4'],
      ['CobVCompleta', 'cobResponse4'],
      ['CobsVConsultadas', 'getCobsV1'],
      ['PixConsultados', 'getPix1'],
      ['Pix', 'pixResponse1'],
      ['Pix', 'pixResponse2'],
      ['Pix', 'pixResponse3'],
      ['Pix', 'pixWebhook1'],
      ['Pix', 'pixWebhook2'],
      ['DevolucaoSolicitada', 'devolucaoSolicitada1'],
      ['Devolucao', 'devolucaoResponse1'],
      ['Devolucao', 'devolucaoResponse2'],
      ['WebhookSolicitado', 'webhookBody1'],
      ['WebhookCompleto', 'webhookResponse1'],
      ['Problema', 'RequisicaoInvalidaCobVExample1'],
      ['Problema', 'OperacaoInvalidaCobVExample1'],
      ['Problema', 'NaoEncontradoExample1'],
    ];
    for (const [schema, name] of cases) {
      expect([schema, name, standardViolations(schema, example(name))]).toEqual([schema, name, []]);
    }
  });

  it('takes a discount by days of early payment (modalities 3 to 6), which upstream refused', () => {
    const cobv = {
      calendario: { dataDeVencimento: '2026-12-10' },
      devedor: { cnpj: '12345678000195', nome: 'Empresa SA' },
      valor: { original: '10.00', desconto: { modalidade: 3, valorPerc: '0.10' } },
      chave: 'a1f4102e-a446-4a57-bcce-6fa48899c1d1',
    };
    expect(standardViolations('CobVSolicitada', cobv)).toEqual([]);
    expect(compile(definitionsOf(upstream), 'CobVSolicitada')(cobv)).toBe(false);
  });
});

function compile(definitions: Record<string, unknown>, name: string): (value: unknown) => boolean {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const validate = ajv.compile({ $ref: `#/$defs/${name}`, $defs: definitions });
  return (value) => validate(value) === true;
}

// Keep the path helper honest: FIXES_FILE is the file beside our copy.
it('reads FIXES.md beside openapi.yaml', () => {
  expect(FIXES_FILE).toBe(join(__dirname, '..', 'openapi', 'FIXES.md'));
});
