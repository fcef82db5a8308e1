/** Slip data shaped as the bank's (FEBRABAN check digits), for documents and installments under test. */

// --- A valid-looking FEBRABAN barcode and its typeable line (same rules as the bank's) -------------

function modulo10(digits: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    const product = Number(digits[i]) * weight;
    sum += product > 9 ? product - 9 : product;
    weight = weight === 2 ? 1 : 2;
  }
  return (10 - (sum % 10)) % 10;
}

function modulo11(digits: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    sum += Number(digits[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const digit = 11 - (sum % 11);
  return digit === 0 || digit > 9 ? 1 : digit;
}

function dueFactor(dueDate: string): string {
  const days = Math.round((Date.parse(`${dueDate}T00:00:00Z`) - Date.parse('1997-10-07T00:00:00Z')) / 86_400_000);
  return String(days < 10_000 ? days : ((days - 10_000) % 9_000) + 1_000).padStart(4, '0');
}

export function barcodeFor(amountCents: number, dueDate: string, freeField: string): string {
  const body = `2379${dueFactor(dueDate)}${String(amountCents).padStart(10, '0')}${freeField}`;
  return body.slice(0, 4) + modulo11(body) + body.slice(4);
}

export function typeableLineFor(barcode: string): string {
  const free = barcode.slice(19);
  const f1 = barcode.slice(0, 4) + free.slice(0, 5);
  const f2 = free.slice(5, 15);
  const f3 = free.slice(15, 25);
  return `${f1}${modulo10(f1)}${f2}${modulo10(f2)}${f3}${modulo10(f3)}${barcode[4]}${barcode.slice(5, 19)}`;
}

export function pixCode(id: string, amountCents: number): string {
  const amount = (amountCents / 100).toFixed(2);
  return `00020101021226900014br.gov.bcb.pix2568pix.sandbox.example/qr/v2/cobv/${id}5204000053039865406${amount}5802BR5920LOJA EXEMPLO LTDA6009SAO PAULO62070503***6304ABCD`;
}

/** Each line of the text without spaces and dots, so a typeable line printed in groups reads as its 47 digits. */
export function squeeze(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ .]/g, ''))
    .join('\n');
}
