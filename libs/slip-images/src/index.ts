export { drawItf, itfBarWidths, ITF_BAR_HEIGHT, ITF_NARROW_MODULE, type BarCanvas } from './itf';
export { qrCodePng, type QrPngOptions } from './qr-png';
