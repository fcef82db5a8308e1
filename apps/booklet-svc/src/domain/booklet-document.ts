/** Everything printed in a booklet (carnê): who pays whom, and each installment's payment data. */
export interface BookletParty {
  name: string;
  /** CPF or CNPJ as given (bare or punctuated); printed in the official punctuation; '' when unknown. */
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
  /**
   * Set once it is paid: the part is printed as paid, with no payment data (typeable line, barcode,
   * PIX). `on` is the payment day (YYYY-MM-DD), null when the day is not known.
   */
  paid: { on: string | null } | null;
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
