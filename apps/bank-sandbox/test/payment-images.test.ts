import { decodeQrPng } from '@payments/test-support/slip-checks';
import { chargeQrPng } from '../src/domain/payment-images';

// The drawing itself (ITF bars, QR PNG) is tested in libs/slip-images; this is the sandbox's choice of size.
it('makes a PNG QR code that decodes to the BR Code text, about 400 px wide', () => {
  const text =
    '00020126450014br.gov.bcb.pix0118fulano@example.com0201x520400005303986540512.345802BR5913FULANO DE TAL6009SAO PAULO62100506ABC1236304F170';
  const png = chargeQrPng(text);
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(png.readUInt32BE(16)).toBeGreaterThanOrEqual(300); // IHDR width
  expect(decodeQrPng(png)).toBe(text);
});
