/** Money, percentages and dates written the Brazilian way, as slips and booklets print them. */

/** "R$ 1.234,56" from integer cents. */
export function formatReais(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const reais = Math.floor(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${sign}R$ ${reais},${String(abs % 100).padStart(2, '0')}`;
}

/** "2,00%" from basis points (hundredths of a percent). */
export function formatPercent(basisPoints: number): string {
  return `${Math.floor(basisPoints / 100)},${String(basisPoints % 100).padStart(2, '0')}%`;
}

/** "DD/MM/YYYY" from "YYYY-MM-DD". */
export function formatBrazilianDate(date: string): string {
  return `${date.slice(8, 10)}/${date.slice(5, 7)}/${date.slice(0, 4)}`;
}
