import { qrCodePng } from '@payments/slip-images';

/**
 * The charge's PIX QR code as the sandbox serves it (qrcode.png) and prints it on the slip PDF: 8 pixels
 * a module and a quiet zone of 2 modules (about 400 px for a BR Code), so it scans on its own too.
 */
export function chargeQrPng(brCode: string): Buffer {
  return qrCodePng(brCode, { scale: 8, margin: 2 });
}
