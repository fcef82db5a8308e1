import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { asMerchantText, decodePixBrCode, decodeQrPixels, dynamicPixBrCodeProblems } from '../src/br-code';
import { crc16CcittFalse } from '../src/slip-checks';

/** TLV field: id, 2-digit length, value. */
const field = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;

/** A dynamic BR Code as the BCB manual lays one out, its CRC computed here. */
function dynamicCode(over: { location?: string; name?: string; txid?: string; key?: string } = {}): string {
  const account =
    field('00', 'br.gov.bcb.pix') +
    (over.key ? field('01', over.key) : '') +
    field('25', over.location ?? 'pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25');
  const body =
    field('00', '01') +
    field('01', '12') +
    field('26', account) +
    field('52', '0000') +
    field('53', '986') +
    field('58', 'BR') +
    field('59', over.name ?? 'ESCOLA PEQUENO PRINCIPE L') +
    field('60', 'FLORIANOPOLIS') +
    field('62', field('05', over.txid ?? '***')) +
    '6304';
  return body + crc16CcittFalse(body);
}

describe('decodePixBrCode', () => {
  it('reads the location, name, city and the *** txid of a charge code, and its CRC', () => {
    const code = decodePixBrCode(dynamicCode());
    expect(code).toMatchObject({
      payloadFormat: '01',
      pointOfInitiation: '12',
      merchantAccount: { id: '26', gui: 'br.gov.bcb.pix' },
      pixKey: null,
      location: 'pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25',
      merchantName: 'ESCOLA PEQUENO PRINCIPE L',
      merchantCity: 'FLORIANOPOLIS',
      amount: null,
      txid: '***',
    });
    expect(code.crc).toBe(code.crcComputed);
  });

  it('computes the reference check value of CRC16-CCITT-FALSE', () => {
    // The catalogue's check value: CRC of the ASCII "123456789".
    expect(crc16CcittFalse('123456789')).toBe('29B1');
  });

  it('throws on a field whose length runs past the end', () => {
    expect(() => decodePixBrCode('000201260599')).toThrow(/announces/);
  });
});

describe('dynamicPixBrCodeProblems', () => {
  const location = 'pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25';

  it('accepts a charge code with the holder and location expected', () => {
    expect(
      dynamicPixBrCodeProblems(dynamicCode(), {
        merchantName: 'Escola Pequeno Príncipe Ltda',
        location: `https://${location}`,
      }),
    ).toEqual([]);
  });

  it('finds a changed character through the CRC', () => {
    const text = dynamicCode().replace('FLORIANOPOLIS', 'FLORIANOPOLIZ');
    expect(dynamicPixBrCodeProblems(text)).toEqual([expect.stringMatching(/^CRC is /)]);
  });

  it('names a code without location, one with a txid, another holder and another location', () => {
    expect(dynamicPixBrCodeProblems(dynamicCode({ txid: 'ABC123' }))).toEqual([
      'field 62-05 of a dynamic code must be ***, is ABC123',
    ]);
    expect(dynamicPixBrCodeProblems(dynamicCode({ location: 'https://pix.example.com/qr/1' }))).toEqual([
      'the location keeps its scheme: "https://pix.example.com/qr/1"',
    ]);
    expect(
      dynamicPixBrCodeProblems(dynamicCode(), { merchantName: 'Outra Escola', location: 'pix.example.com/x' }),
    ).toEqual([
      'merchant name is "ESCOLA PEQUENO PRINCIPE L", the holder "Outra Escola" gives "OUTRA ESCOLA"',
      `location is "${location}", the bank's charge is at "pix.example.com/x"`,
    ]);
    expect(
      dynamicPixBrCodeProblems(dynamicCode({ key: 'fulano@example.com', location: 'pix.example.com/qr/1' })),
    ).toEqual(['a dynamic code names a key too (sub-field 01 "fulano@example.com")']);
  });
});

describe('asMerchantText', () => {
  it('drops accents, upper-cases and cuts at 25 characters', () => {
    expect(asMerchantText('Escola Pequeno Príncipe Ltda')).toBe('ESCOLA PEQUENO PRINCIPE L');
    expect(asMerchantText('Açaí da Esquina')).toBe('ACAI DA ESQUINA');
  });
});

describe('decodeQrPixels', () => {
  it('reads a QR code from RGBA and from RGB pixels', async () => {
    const text = dynamicCode();
    const png = PNG.sync.read(await QRCode.toBuffer(text, { margin: 4, scale: 4 }));
    const rgba = new Uint8ClampedArray(png.data);
    expect(decodeQrPixels({ data: rgba, width: png.width, height: png.height, channels: 4 })).toBe(text);
    const rgb = new Uint8ClampedArray(png.width * png.height * 3);
    for (let i = 0; i < png.width * png.height; i += 1) rgb.set(rgba.subarray(i * 4, i * 4 + 3), i * 3);
    expect(decodeQrPixels({ data: rgb, width: png.width, height: png.height, channels: 3 })).toBe(text);
  });

  it('says null when there is no code', () => {
    const blank = new Uint8ClampedArray(40 * 40).fill(255);
    expect(decodeQrPixels({ data: blank, width: 40, height: 40, channels: 1 })).toBeNull();
  });
});
