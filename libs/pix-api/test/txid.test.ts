import { randomUUID } from 'node:crypto';
import { receivableIdOfTxid, txidFor } from '../src';
import { DOCUMENT } from './document';

// The oracle is the standard's own TxId pattern, read from the document, not our regex.
const txidPattern = new RegExp(String(DOCUMENT.components.schemas.TxId?.pattern));

describe('txid of a receivable', () => {
  it('gives the receivable id back, for many ids', () => {
    for (let i = 0; i < 200; i += 1) {
      const id = randomUUID();
      const txid = txidFor(id);
      expect(receivableIdOfTxid(txid)).toBe(id);
    }
  });

  it("matches the standard's TxId pattern and is 35 characters", () => {
    const txid = txidFor('0F8FAD5B-D9CB-469F-A165-70867728950E');
    expect(txid).toBe('rcv0f8fad5bd9cb469fa16570867728950e');
    expect(txid).toHaveLength(35);
    expect(txidPattern.source).toBe('^[a-zA-Z0-9]{26,35}$');
    expect(txidPattern.test(txid)).toBe(true);
    expect(txidPattern.test(`${txid}x`)).toBe(false);
  });

  it('is the same for the same receivable, so a retried create names the same cobv', () => {
    const id = randomUUID();
    expect(txidFor(id)).toBe(txidFor(id));
    expect(txidFor(id.toUpperCase())).toBe(txidFor(id));
  });

  it('refuses what is not a receivable id', () => {
    expect(() => txidFor('not-an-id')).toThrow(TypeError);
  });

  it('says null for a txid that is not ours', () => {
    expect(receivableIdOfTxid('7978c0c97ea847e78e8849634473c1f1')).toBeNull();
    expect(receivableIdOfTxid('rcv0f8fad5bd9cb469fa16570867728950')).toBeNull();
    expect(receivableIdOfTxid('RCV0F8FAD5BD9CB469FA16570867728950E')).toBeNull();
    expect(receivableIdOfTxid('')).toBeNull();
  });
});
