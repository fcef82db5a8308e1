import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signedHeaders } from '../src/domain/signature';

const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');

it('signs "id.timestamp.body" with HMAC-SHA256 of the decoded secret (checked with node:crypto)', () => {
  const at = new Date('2026-11-23T12:00:00Z');
  const body = '{"success":true}';
  const headers = signedHeaders(secret, 'evt_1', body, at);
  expect(headers['webhook-id']).toBe('evt_1');
  expect(headers['webhook-timestamp']).toBe(String(at.getTime() / 1000));
  const expected = createHmac('sha256', Buffer.alloc(32, 7))
    .update(`evt_1.${headers['webhook-timestamp']}.${body}`)
    .digest('base64');
  expect(headers['webhook-signature']).toBe(`v1,${expected}`);
});

it('is accepted by the reference standardwebhooks verifier, and a changed body is not', () => {
  const body = JSON.stringify({ type: 'registered', value: 10.5 });
  const headers = signedHeaders(secret, 'evt_2', body, new Date());
  expect(new Webhook(secret).verify(body, headers)).toEqual({ type: 'registered', value: 10.5 });
  expect(() => new Webhook(secret).verify(body.replace('10.5', '10.6'), headers)).toThrow();
});

it('signs bodies with non-ASCII text as UTF-8, as the reference library does', () => {
  const body = JSON.stringify({ name: 'Loja Carnê São João', value: 1 });
  const at = new Date('2026-11-23T12:00:00Z');
  expect(signedHeaders(secret, 'evt_3', body, at)['webhook-signature']).toBe(
    new Webhook(secret).sign('evt_3', at, body),
  );
});

it('during a rotation signs with each secret, new first, and a receiver holding either verifies it', () => {
  const newer = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
  const body = JSON.stringify({ type: 'paid', value: 1 });
  const at = new Date();
  const headers = signedHeaders([newer, secret], 'evt_4', body, at);
  const signatures = headers['webhook-signature'].split(' ');
  expect(signatures).toEqual([
    signedHeaders(newer, 'evt_4', body, at)['webhook-signature'],
    signedHeaders(secret, 'evt_4', body, at)['webhook-signature'],
  ]);
  expect(new Webhook(newer).verify(body, headers)).toEqual({ type: 'paid', value: 1 });
  expect(new Webhook(secret).verify(body, headers)).toEqual({ type: 'paid', value: 1 });
  expect(() => new Webhook('whsec_' + Buffer.alloc(32, 1).toString('base64')).verify(body, headers)).toThrow();
});
