import { checkLink, signLink } from '../src';

it('accepts its own link until it expires, and nothing altered', () => {
  const now = new Date('2026-11-23T12:00:00Z');
  const { expires, signature } = signLink('s3cret', 'booklet-1', new Date('2026-11-24T12:00:00Z'));
  expect(checkLink('s3cret', 'booklet-1', expires, signature, now)).toBe('valid');
  expect(checkLink('s3cret', 'booklet-2', expires, signature, now)).toBe('tampered');
  expect(checkLink('s3cret', 'booklet-1', String(Number(expires) + 1), signature, now)).toBe('tampered');
  expect(checkLink('other', 'booklet-1', expires, signature, now)).toBe('tampered');
  expect(
    checkLink(
      's3cret',
      'booklet-1',
      expires,
      signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
      now,
    ),
  ).toBe('tampered');
  expect(checkLink('s3cret', 'booklet-1', undefined, signature, now)).toBe('tampered');
  expect(checkLink('s3cret', 'booklet-1', expires, signature, new Date('2026-11-25T12:00:00Z'))).toBe('expired');
});
