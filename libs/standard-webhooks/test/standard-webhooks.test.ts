import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signingKey, signWebhook, verifyWebhook, type ReceivedHeaders, type SignedHeaders } from '../src';

// The oracle is the standardwebhooks package (the standard's reference library), never this code.
const secret = `whsec_${randomBytes(24).toString('base64')}`;
const other = `whsec_${randomBytes(24).toString('base64')}`;
const body = JSON.stringify({ hello: 'olá', value: 12.34 });
const at = new Date('2026-11-28T12:00:00Z');
const now = () => at;

const received = (h: SignedHeaders): ReceivedHeaders => ({
  id: h['webhook-id'],
  timestamp: h['webhook-timestamp'],
  signature: h['webhook-signature'],
});

describe('signWebhook', () => {
  it('signs as the reference library signs, and the reference verifies it', () => {
    const headers = signWebhook(signingKey(secret), 'msg_1', body, at);
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', at, body));
    jest.useFakeTimers({ now: at });
    try {
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    } finally {
      jest.useRealTimers();
    }
  });

  it('gives one signature per key, the first key first', () => {
    const headers = signWebhook([signingKey(secret), signingKey(other)], 'msg_2', body, at);
    const [first, second] = headers['webhook-signature'].split(' ');
    expect(first).toBe(new Webhook(secret).sign('msg_2', at, body));
    expect(second).toBe(new Webhook(other).sign('msg_2', at, body));
  });

  it('keys a plain secret by its UTF-8 bytes when told, as the reference does with a raw key', () => {
    const plain = 'development-webhook-secret';
    const headers = signWebhook(signingKey(plain, 'utf8'), 'msg_3', body, at);
    expect(headers['webhook-signature']).toBe(
      new Webhook(Buffer.from(plain), { format: 'raw' }).sign('msg_3', at, body),
    );
  });
});

describe('verifyWebhook', () => {
  const signedByReference = (id: string, when: Date, key = secret) => ({
    id,
    timestamp: String(Math.floor(when.getTime() / 1000)),
    signature: new Webhook(key).sign(id, when, body),
  });

  it('accepts what the reference signed, under any of the keys', () => {
    expect(verifyWebhook(signingKey(secret), signedByReference('msg_4', at), body, { now })).toEqual({
      ok: true,
      id: 'msg_4',
    });
    expect(
      verifyWebhook([signingKey(other), signingKey(secret)], signedByReference('msg_4', at), body, { now }),
    ).toEqual({ ok: true, id: 'msg_4' });
  });

  it('accepts a body given as bytes', () => {
    expect(verifyWebhook(signingKey(secret), signedByReference('msg_5', at), Buffer.from(body), { now }).ok).toBe(true);
  });

  it('refuses another key, another body, another id', () => {
    const headers = signedByReference('msg_6', at);
    expect(verifyWebhook(signingKey(other), headers, body, { now })).toEqual({ ok: false, failure: 'bad_signature' });
    expect(verifyWebhook(signingKey(secret), headers, `${body} `, { now })).toEqual({
      ok: false,
      failure: 'bad_signature',
    });
    expect(verifyWebhook(signingKey(secret), { ...headers, id: 'msg_7' }, body, { now })).toEqual({
      ok: false,
      failure: 'bad_signature',
    });
  });

  it('refuses a timestamp outside the tolerance either way, and one that is not digits', () => {
    const old = signedByReference('msg_8', new Date(at.getTime() - 301_000));
    const ahead = signedByReference('msg_8', new Date(at.getTime() + 301_000));
    expect(verifyWebhook(signingKey(secret), old, body, { now })).toEqual({ ok: false, failure: 'too_old' });
    expect(verifyWebhook(signingKey(secret), ahead, body, { now })).toEqual({ ok: false, failure: 'too_new' });
    const recent = signedByReference('msg_8', new Date(at.getTime() - 299_000));
    expect(verifyWebhook(signingKey(secret), recent, body, { now }).ok).toBe(true);
    for (const timestamp of ['17e8', `${recent.timestamp}abc`, ''])
      expect(verifyWebhook(signingKey(secret), { ...recent, timestamp }, body, { now }).ok).toBe(false);
  });

  it('refuses missing headers and signatures of another version', () => {
    const headers = signedByReference('msg_9', at);
    expect(verifyWebhook(signingKey(secret), { ...headers, signature: undefined }, body, { now })).toEqual({
      ok: false,
      failure: 'missing_headers',
    });
    const v2 = headers.signature.replace('v1,', 'v2,');
    expect(verifyWebhook(signingKey(secret), { ...headers, signature: v2 }, body, { now })).toEqual({
      ok: false,
      failure: 'bad_signature',
    });
  });

  it('verifies what it signed', () => {
    const headers = signWebhook([signingKey(other), signingKey(secret)], 'msg_10', body, at);
    expect(verifyWebhook(signingKey(secret), received(headers), body, { now })).toEqual({ ok: true, id: 'msg_10' });
  });
});
