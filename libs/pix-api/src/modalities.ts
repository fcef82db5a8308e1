// Modality codes of a cobv's valor.multa, valor.juros and valor.desconto, as the standard's document
// names them in its domain tables (components.schemas.CobVValor). Only the ones our terms map to are
// named here; docs/providers/pix.md shows the whole tables.

/** valor.multa.modalidade: 1 "Valor Fixo", 2 "Percentual". */
export const FINE_MODALITY = { fixedAmount: 1, percentage: 2 } as const;

/**
 * valor.juros.modalidade: 1 "Valor (dias corridos)", 2 "Percentual ao dia (dias corridos)",
 * 3 "Percentual ao mês (dias corridos)", 4 "Percentual ao ano (dias corridos)", 5 to 8 the same on business days.
 */
export const INTEREST_MODALITY = {
  amountPerCalendarDay: 1,
  percentPerCalendarDay: 2,
  percentPerCalendarMonth: 3,
  percentPerCalendarYear: 4,
  amountPerBusinessDay: 5,
  percentPerBusinessDay: 6,
  percentPerBusinessMonth: 7,
  percentPerBusinessYear: 8,
} as const;

/**
 * valor.desconto.modalidade: 1 "Valor Fixo até a[s] data[s] informada[s]", 2 "Percentual até a data informada",
 * 3 to 6 per day of early payment.
 */
export const DISCOUNT_MODALITY = {
  fixedAmountUntilDate: 1,
  percentageUntilDate: 2,
  amountPerCalendarDayEarly: 3,
  amountPerBusinessDayEarly: 4,
  percentPerCalendarDayEarly: 5,
  percentPerBusinessDayEarly: 6,
} as const;
