import { epochDay } from './calendar-date';

/**
 * The due-date factor of the bank slip barcode (positions 6-9): days since the FEBRABAN base date
 * 1997-10-07. Four digits ran out on 2025-02-21 (factor 9999); from 2025-02-22 the factor restarts at
 * 1000 and counts up, wrapping to 1000 again every 9,000 days (FEBRABAN's 2025 reset rule).
 */
const BASE_DAY = epochDay('1997-10-07');
const RESET_DAY = epochDay('2025-02-22');

export function dueDateFactor(dueDate: string): string {
  const day = epochDay(dueDate);
  if (day <= BASE_DAY) throw new RangeError(`a due date must be after 1997-10-07, got ${dueDate}`);
  const factor = day < RESET_DAY ? day - BASE_DAY : 1000 + ((day - RESET_DAY) % 9000);
  return String(factor).padStart(4, '0');
}
