/**
 * Where things sit on a booklet's pages: how many installment parts a page holds, and the geometry,
 * inks and rules the cover and the parts are drawn with.
 */

/** Installment parts per A4 page. */
export const PARTS_PER_PAGE = 3;

/** Pages of a booklet with n installments: the cover, then three installments a page. */
export function bookletPageCount(installments: number): number {
  return 1 + Math.ceil(installments / PARTS_PER_PAGE);
}

// ---------------------------------------------------------------------------------------------------
// Geometry (PDF points; 1 mm = 72 / 25.4 pt). A4 is 210 x 297 mm.

export const MM = 72 / 25.4;
export const PAGE_WIDTH = 595.28;
export const PAGE_HEIGHT = 841.89;
export const MARGIN_X = 8 * MM;
export const PAGE_TOP = 8 * MM;
export const PART_HEIGHT = (PAGE_HEIGHT - 2 * PAGE_TOP) / PARTS_PER_PAGE;

export const STUB_X = MARGIN_X;
export const STUB_WIDTH = 40 * MM;
export const CUT_X = MARGIN_X + 43 * MM;
export const MAIN_X = MARGIN_X + 46 * MM;
export const MAIN_RIGHT = PAGE_WIDTH - MARGIN_X;
export const RIGHT_COLUMN_WIDTH = 40 * MM;
export const RIGHT_X = MAIN_RIGHT - RIGHT_COLUMN_WIDTH;
export const LEFT_WIDTH = RIGHT_X - MAIN_X;

export const QR_SIZE = 28 * MM;
export const QR_SIZE_PIX_ONLY = 33 * MM;

export const INK = '#000000';
export const LABEL = '#555555';
export const RULE = 0.5;
export const PAD = 1.2 * MM;
