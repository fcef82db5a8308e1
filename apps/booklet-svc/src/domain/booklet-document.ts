/** Everything printed in a booklet (carnê): who pays whom, and each installment's payment data. */
export interface BookletParty {
  name: string;
  taxId: string;
  /** Address lines, already formatted; may be empty. */
  address: string[];
}

export interface BookletInstallment {
  accountReceivableId: string;
  /** 1-based position in the booklet, by due date. */
  number: number;
  dueDate: string; // YYYY-MM-DD
  amountCents: number;
  /** Discount / fine / interest instructions, in Portuguese, one per line. */
  instructions: string[];
  ourNumber: string;
  /** null for a PIX-only charge. */
  typeableLine: string | null;
  /** 44 digits; null for a PIX-only charge. */
  barcode: string | null;
  pixCopyAndPaste: string;
}

export interface BookletDocument {
  paymentSlipId: string;
  payee: BookletParty;
  payer: BookletParty;
  /** Ordered by due date. */
  installments: BookletInstallment[];
}
