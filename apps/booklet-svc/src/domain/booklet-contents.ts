import type { Beneficiary, InstallmentView } from '@payments/contracts';
import type { BookletDocument, BookletInstallment, BookletParty } from './booklet-document';

/**
 * What a booklet holds: the installments of its payment_slip_id that are pending or paid,
 * by due date, paid ones marked paid; cancelled and rejected ones left out. receivables-svc already
 * answers so, but the booklet does not depend on it: the rule is applied again here.
 */

const PRINTED_STATES: ReadonlySet<string> = new Set<InstallmentView['state']>(['pending', 'approved']);

/** Pending and paid installments, by due date (then id, so equal dates always print in one order). */
export function bookletInstallments(views: readonly InstallmentView[]): InstallmentView[] {
  return views
    .filter((v) => PRINTED_STATES.has(v.state))
    .sort((a, b) => compare(a.due_date, b.due_date) || compare(a.account_receivable_id, b.account_receivable_id));
}

/** A payable installment the provider has not registered yet has no payment data to print; a paid one needs none. */
export function awaitsRegistration(installment: InstallmentView): boolean {
  return installment.state === 'pending' && !installment.registered;
}

/** The booklet of installments already chosen by bookletInstallments, paid to `payee`. */
export function bookletDocument(
  paymentSlipId: string,
  payee: BookletParty,
  installments: readonly InstallmentView[],
): BookletDocument {
  if (installments.length === 0) throw new RangeError('a booklet holds at least one installment');
  return {
    paymentSlipId,
    payee,
    payer: payerParty(installments[0]),
    installments: installments.map(printedInstallment),
  };
}

function printedInstallment(i: InstallmentView, index: number): BookletInstallment {
  const paid = i.state === 'approved';
  return {
    accountReceivableId: i.account_receivable_id,
    number: index + 1,
    dueDate: i.due_date,
    amountCents: i.amount_cents,
    paid: paid ? { on: i.payment_date === null ? null : paymentDay(i.payment_date) } : null,
    instructions: i.instructions,
    ourNumber: i.our_number ?? '',
    // A paid installment is not to be paid again: nothing of it is payable. A PIX charge at a bank has
    // no slip: its line and barcode may come empty rather than absent.
    typeableLine: paid || !i.typeable_line ? null : i.typeable_line,
    barcode: paid || !i.barcode ? null : i.barcode,
    pixCopyAndPaste: paid ? '' : (i.pix_copy_and_paste ?? ''),
  };
}

/** The payee printed on the booklet: the beneficiary of the installments' provider account. */
export function payeeParty(beneficiary: Beneficiary): BookletParty {
  return {
    name: beneficiary.name,
    taxId: beneficiary.tax_id,
    address: [beneficiary.address, beneficiary.city].filter((line): line is string => Boolean(line)),
  };
}

/** Installments accepted before provider accounts existed name no beneficiary: the tenant's name is all there is. */
export function legacyPayeeParty(tenantName: string): BookletParty {
  return { name: tenantName, taxId: '', address: [] };
}

function payerParty(i: InstallmentView): BookletParty {
  const p = i.payer;
  const street = [p.address, p.number, p.neighborhood].filter(Boolean).join(', ');
  const city = [p.city, p.state].filter(Boolean).join(' - ');
  return {
    name: p.name,
    taxId: p.cnpj_cpf,
    address: [street, [city, p.zip_code].filter(Boolean).join('  CEP ')].filter(Boolean),
  };
}

const BRAZIL_DAY = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Sao_Paulo',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/**
 * The day (YYYY-MM-DD) of a payment_date. The spec's payment_date is zoneless local time, so its date
 * part is the day; one with a zone is read in Brasília time, the day the payer saw; null if unreadable.
 */
export function paymentDay(paymentDate: string): string | null {
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(paymentDate);
  if (!zoned) return /^\d{4}-\d{2}-\d{2}(?:T|$)/.test(paymentDate) ? paymentDate.slice(0, 10) : null;
  const instant = new Date(paymentDate);
  return Number.isNaN(instant.getTime()) ? null : BRAZIL_DAY.format(instant);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
