import {
  cancelBody,
  cobvBody,
  PIX_DIALECTS,
  refundBody,
  standardViolations,
  txidFor,
  webhookBody,
  type CobvTerms,
} from '../src';
import { DOCUMENT, domainTable } from './document';

const terms: CobvTerms = {
  txid: txidFor('0f8fad5b-d9cb-469f-a165-70867728950e'),
  chave: '5f84a4c5-c5cb-4599-9f13-7eb4d419dacc',
  dueDate: '2026-12-10',
  amountCents: 12345,
  payer: {
    taxId: '123.456.789-09',
    name: 'Francisco da Silva',
    address: 'Alameda Souza, 80',
    city: 'Recife',
    state: 'pe',
    zipCode: '70011-750',
    email: 'francisco@example.com',
  },
  fineBp: 250,
  interestPerDayCents: 33,
  discount: { amountCents: 1000, until: '2026-12-01' },
  daysPayableAfterDue: 60,
  message: 'Parcela 1 de 3',
};

// The modality codes as the document names them: read from the domain tables in CobVValor's descriptions.
interface Modality {
  properties?: { modalidade?: { description?: string } };
}
interface ValueSchema {
  properties: { multa: Modality; juros: Modality; desconto: { allOf: Modality[] } };
}
const valueSchema = DOCUMENT.components.schemas.CobVValor as unknown as ValueSchema;
const tableOf = (modality: Modality | undefined): Map<string, number> =>
  domainTable(modality?.properties?.modalidade?.description ?? '');
const fineTable = tableOf(valueSchema.properties.multa);
const interestTable = tableOf(valueSchema.properties.juros);
const discountTable = tableOf(valueSchema.properties.desconto.allOf[0]);

describe('cobvBody', () => {
  for (const dialect of Object.values(PIX_DIALECTS)) {
    it(`conforms to the standard's CobVSolicitada (${dialect.name} dialect)`, () => {
      expect(standardViolations('CobVSolicitada', cobvBody(terms, dialect))).toEqual([]);
    });
  }

  it('conforms for a company payer without address, fine, interest or discount', () => {
    const body = cobvBody(
      {
        ...terms,
        payer: { taxId: '12.345.678/0001-95', name: 'Empresa SA' },
        fineBp: 0,
        interestPerDayCents: 0,
        discount: null,
        message: undefined,
      },
      PIX_DIALECTS.standard,
    );
    expect(standardViolations('CobVSolicitada', body)).toEqual([]);
    expect(body).toEqual({
      calendario: { dataDeVencimento: '2026-12-10', validadeAposVencimento: 60 },
      devedor: { cnpj: '12345678000195', nome: 'Empresa SA' },
      valor: { original: '123.45' },
      chave: terms.chave,
    });
  });

  it('maps the terms with the modality codes the document names', () => {
    // The document's tables, read from its text: the oracle for our mapping.
    expect(fineTable.get('Percentual')).toBe(2);
    expect(interestTable.get('Valor (dias corridos)')).toBe(1);
    expect(discountTable.get('Valor Fixo até a[s] data[s] informada[s]')).toBe(1);

    const body = cobvBody(terms, PIX_DIALECTS.inter);
    expect(body).toEqual({
      calendario: { dataDeVencimento: '2026-12-10', validadeAposVencimento: 60 },
      devedor: {
        cpf: '12345678909',
        nome: 'Francisco da Silva',
        email: 'francisco@example.com',
        logradouro: 'Alameda Souza, 80',
        cidade: 'Recife',
        uf: 'PE',
        cep: '70011750',
      },
      valor: {
        original: '123.45',
        // fine: 250 basis points is 2.50 percent
        multa: { modalidade: fineTable.get('Percentual'), valorPerc: '2.50' },
        // interest: 33 cents a calendar day
        juros: { modalidade: interestTable.get('Valor (dias corridos)'), valorPerc: '0.33' },
        // discount: 10.00 off when paid until 2026-12-01
        desconto: {
          modalidade: discountTable.get('Valor Fixo até a[s] data[s] informada[s]'),
          descontoDataFixa: [{ data: '2026-12-01', valorPerc: '10.00' }],
        },
      },
      chave: terms.chave,
      solicitacaoPagador: 'Parcela 1 de 3',
    });
  });

  it('is refused by the schema when a term is out of the standard (the oracle can say no)', () => {
    const body = cobvBody(terms, PIX_DIALECTS.standard) as { valor: { multa: { modalidade: number } } };
    body.valor.multa.modalidade = 3;
    expect(standardViolations('CobVSolicitada', body).map((v) => v.path)).toContain('/valor/multa/modalidade');
  });
});

describe('other request bodies', () => {
  it('cancels with the status the standard names', () => {
    const body = cancelBody(PIX_DIALECTS.standard);
    expect(body).toEqual({ status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
    expect(standardViolations('CobVRevisada', body)).toEqual([]);
  });

  it('asks for a devolução and sets the webhook in the standard shapes', () => {
    expect(standardViolations('DevolucaoSolicitada', refundBody(789, 'Pago em dobro'))).toEqual([]);
    expect(refundBody(789)).toEqual({ valor: '7.89' });
    expect(standardViolations('WebhookSolicitado', webhookBody('https://erp.example.com/pix/1'))).toEqual([]);
  });
});
