import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type, type TSchema } from '@sinclair/typebox';
import {
  CallbackRequestBatchSchema,
  compileValidator,
  createAjv,
  MESSAGE_VERSION_FIELD,
  parseVersion,
  Streams,
  streamVersion,
  versionProblem,
  withStreamVersion,
  type StreamSpec,
} from '../src';

/**
 * Rolling upgrades (docs/architecture.md): every stream message as version 1.0 producers wrote it
 * (test-vectors/bus/1.0.json, frozen) is read by the current readers, and every message the current
 * producers write is read by a 1.0 reader (its schemas frozen in test-vectors/bus/1.0.schemas.json,
 * checked the way 1.0's JobFailures did: JSON, then the schema with unknown fields stripped).
 */

interface Fixture {
  name: string;
  stream: string;
  msg_id: string;
  payload: Record<string, unknown>;
}
const vectors = join(__dirname, '../../../test-vectors/bus');
const v1_0 = JSON.parse(readFileSync(join(vectors, '1.0.json'), 'utf8')) as { messages: Fixture[] };
const v1_0Schemas = JSON.parse(readFileSync(join(vectors, '1.0.schemas.json'), 'utf8')) as {
  schemas: Record<string, TSchema>;
};

const specs: StreamSpec[] = Object.values(Streams);
const specOf = (name: string): StreamSpec => specs.find((s) => s.name === name)!;
/** What the current reader of a stream checks: its messageSchema, or (callbacks) the batch. */
const currentSchema = (spec: StreamSpec): TSchema => spec.messageSchema ?? CallbackRequestBatchSchema;
/** The 1.0 reader, in an ajv of its own (its $ids would clash with the current ones). */
const oldAjv = createAjv();
const readAs1_0 = (stream: string, json: string) =>
  compileValidator(v1_0Schemas.schemas[stream], oldAjv)(JSON.parse(json) as unknown);
/** What a current producer adds to a 1.0 message: RegistrationJob 1.1's queued_at. */
const currentPayload = (f: Fixture): Record<string, unknown> =>
  f.stream === Streams.receivableRegistrations.name
    ? { ...f.payload, queued_at: '2026-11-26T05:00:00.000Z' }
    : f.payload;

describe('message versions', () => {
  it('parses versions as they travel; none is 1.0', () => {
    expect(parseVersion('1.2')).toEqual({ major: 1, minor: 2 });
    expect(parseVersion('2')).toEqual({ major: 2, minor: 0 });
    expect(parseVersion(undefined)).toEqual({ major: 1, minor: 0 });
    expect(parseVersion('')).toEqual({ major: 1, minor: 0 });
    expect(parseVersion('v1')).toBeUndefined();
    expect(parseVersion({})).toBeUndefined();
  });

  it('a reader takes any minor of its major, and refuses another major naming both', () => {
    const known = { major: 1, minor: 1 };
    expect(versionProblem('1.0', known)).toBeUndefined();
    expect(versionProblem('1.7', known)).toBeUndefined();
    expect(versionProblem(undefined, known)).toBeUndefined();
    expect(versionProblem('2.0', known)).toBe('unsupported message version 2.0: this reader knows major 1 (1.1)');
    expect(versionProblem('x', known)).toBe('unreadable message version "x"');
  });

  it('stamps a stream message with its stream version, in the body', () => {
    expect(withStreamVersion(Streams.receivableRegistrations, { a: 1 })).toEqual({ a: 1, v: '1.1' });
    expect(withStreamVersion(Streams.bookletBuilds, { a: 1 })).toEqual({ a: 1, v: '1.0' });
    const unversioned = { name: 'n', subject: 's', consumer: 'c', duplicateWindowMs: 1 };
    expect(withStreamVersion(unversioned, { a: 1 })).toEqual({ a: 1, v: '1.0' });
  });

  it('a reader gives a field missing from an older minor its default, and strips one it does not know', () => {
    const reader = compileValidator(
      Type.Object(
        { id: Type.String(), mode: Type.Optional(Type.String({ default: 'standard' })) },
        { $id: 'Defaulted' },
      ),
    );
    expect(reader({ id: 'a' })).toEqual({ ok: true, value: { id: 'a', mode: 'standard' } });
    expect(reader({ id: 'a', mode: 'fast', extra: 1 })).toEqual({ ok: true, value: { id: 'a', mode: 'fast' } });
  });

  it('has a frozen 1.0 message and schema for every stream', () => {
    expect(new Set(v1_0.messages.map((m) => m.stream))).toEqual(new Set(specs.map((s) => s.name)));
    expect(Object.keys(v1_0Schemas.schemas).sort()).toEqual(specs.map((s) => s.name).sort());
  });

  describe.each(v1_0.messages.map((m) => [m.name, m] as const))('%s', (_name, fixture) => {
    const spec = specOf(fixture.stream);

    it('as 1.0 wrote it, is read by the current reader (N reads N-1)', () => {
      const body = JSON.parse(JSON.stringify(fixture.payload)) as Record<string, unknown>;
      expect(versionProblem(body[MESSAGE_VERSION_FIELD], streamVersion(spec))).toBeUndefined();
      const read = compileValidator(currentSchema(spec))(body);
      expect(read).toEqual({ ok: true, value: fixture.payload });
    });

    it('as the current producer writes it, is read by a 1.0 reader (N-1 reads N)', () => {
      const json = JSON.stringify(withStreamVersion(spec, currentPayload(fixture)));
      expect(JSON.parse(json)).toHaveProperty(MESSAGE_VERSION_FIELD, `1.${streamVersion(spec).minor}`);
      // Unknown to 1.0 (the version field, queued_at): stripped, the rest read as 1.0 would.
      expect(readAs1_0(fixture.stream, json)).toEqual({ ok: true, value: fixture.payload });
    });
  });

  it('the 1.0 registration reader would refuse a job missing a field it requires (the check can fail)', () => {
    const json = JSON.stringify({ v: '1.1', tenant_id: '8f14e45f-ceea-467f-a0e6-7c0d6b1a9f21' });
    expect(readAs1_0('registrations', json)).toMatchObject({ ok: false });
  });
});
