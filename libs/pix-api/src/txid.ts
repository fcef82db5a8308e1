// The txid of a receivable's PIX charge is derived from the receivable id, so creating it again after a
// crash or a retry names the same cobv at the bank and can never make a second one.

const PREFIX = 'rcv';
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const OUR_TXID = /^rcv([0-9a-f]{32})$/;

/** The txid of the PIX charge of `receivableId` (a UUID): 'rcv' + its 32 hex digits in lower case. */
export function txidFor(receivableId: string): string {
  if (!UUID.test(receivableId)) throw new TypeError(`not a receivable id: ${receivableId}`);
  return PREFIX + receivableId.replace(/-/g, '').toLowerCase();
}

/** The receivable id a txid was made from, or null when the txid is not one of ours. */
export function receivableIdOfTxid(txid: string): string | null {
  const match = OUR_TXID.exec(txid);
  if (!match) return null;
  const hex = match[1] ?? '';
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
}
