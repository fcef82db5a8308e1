import { Streams, Subjects, type RequestReplyRegistry, type StreamRegistry } from '../src';

/** Every string at the leaves of a nested object type. */
type Leaves<T> = T extends string ? T : { [K in keyof T]: Leaves<T[K]> }[keyof T];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

it('types every subject and every stream, and nothing else (checked by the type-check)', () => {
  const subjects: Same<Leaves<typeof Subjects>, keyof RequestReplyRegistry> = true;
  const streams: Same<(typeof Streams)[keyof typeof Streams]['subject'], keyof StreamRegistry> = true;
  expect([subjects, streams]).toEqual([true, true]);
});
