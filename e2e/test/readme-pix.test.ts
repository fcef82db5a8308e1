import { documentedBlockTest } from '../support/readme-block';

/*
 * The pix account path of docs/providers/accounts.md is run as written: the block marked
 * <!-- accounts-pix --> is pasted into bash against a real `npm start` (its own ports, database and bus prefix), as a new user would:
 * a PIX API integration from the sandbox, the tenant's pix account set with the admin CLI, a PIX
 * charge registered as a cobv (our_number its txid, the bank's BR Code, no line or barcode) and paid
 * by its txid with its paid callback, and a slip refused at intake. It needs bash and curl; without
 * curl the test is skipped, saying so.
 */
const block = { file: 'docs/providers/accounts.md', marker: 'accounts-pix' };

documentedBlockTest(
  block,
  'pix',
  'pix',
  'the pix account path of the provider accounts page runs as written against npm start',
  (output) => {
    expect(output).toContain('"provider":"pix"');
    // Registered as a cobv (the block prints its payment_data indented): no line, barcode or PDF,
    // the txid as our_number, the bank's BR Code and a QR image link of the gateway.
    expect(output).toMatch(/"our_number": "rcv[0-9a-f]{32}"/);
    expect(output).toMatch(/"typeable_line": ""/);
    expect(output).toMatch(/"barcode": ""/);
    expect(output).toMatch(/"pdf": ""/);
    expect(output).toMatch(/"pix_copy_and_paste": "000201/);
    expect(output).toMatch(/"qrcode_image": "https?:\/\/[^"]+"/);
    expect(output).toContain('qrcode -> HTTP 200, image/png');
    expect(output).toContain('pay -> HTTP 200');
    expect(output.match(/"type":"paid"/g)).toHaveLength(1);
    expect(output).toContain('"code":"slip_not_supported"');
    expect(output).toMatch(/"path":"\/0\/payment_method"/);
    expect(output).toContain(' -> HTTP 422');
  },
);
