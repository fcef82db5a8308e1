import { SpanStatusCode, trace } from '@opentelemetry/api';
import { QUERY_REDACTED, redactValue } from '../src/sdk';
import { startInMemoryTelemetry, type InMemoryTelemetry } from '../src/testing';

const tracer = trace.getTracer('redaction-test');
let telemetry: InMemoryTelemetry;

beforeAll(() => {
  telemetry = startInMemoryTelemetry('redaction-test');
});
afterAll(async () => {
  await telemetry.shutdown();
});

const signedLink =
  'http://127.0.0.1:3000/api/v1/bank-slip-booklet/downloads/0b0e5a4e-9f1c-4a57-a4a3-0b3a3bfc4f0d?expires=1893456000&signature=AbC123_-';

it('strips query strings from URL attributes and drops url.query before any exporter sees the span', async () => {
  const span = tracer.startSpan('GET', {
    attributes: {
      'url.full': signedLink,
      'http.url': signedLink,
      'http.target': '/api/v1/bank-slip-booklet/downloads/x?expires=1&signature=s',
      'url.query': 'expires=1&signature=s',
      'url.path': '/api/v1/bank-slip-booklet/downloads/x',
      'http.route': '/api/v1/bank-slip-booklet/downloads/:booklet_id',
      'http.response.status_code': 200,
    },
  });
  span.end();
  await telemetry.flush();

  const [exported] = telemetry.spans();
  expect(exported.attributes).toEqual({
    'url.full': `http://127.0.0.1:3000/api/v1/bank-slip-booklet/downloads/0b0e5a4e-9f1c-4a57-a4a3-0b3a3bfc4f0d${QUERY_REDACTED}`,
    'http.url': `http://127.0.0.1:3000/api/v1/bank-slip-booklet/downloads/0b0e5a4e-9f1c-4a57-a4a3-0b3a3bfc4f0d${QUERY_REDACTED}`,
    'http.target': `/api/v1/bank-slip-booklet/downloads/x${QUERY_REDACTED}`,
    'url.path': '/api/v1/bank-slip-booklet/downloads/x',
    'http.route': '/api/v1/bank-slip-booklet/downloads/:booklet_id',
    'http.response.status_code': 200,
  });
  expect(JSON.stringify(exported.attributes)).not.toContain('signature');
  telemetry.reset();
});

it('masks punctuated CPF and CNPJ numbers in attributes, exception events and the status message', async () => {
  const span = tracer.startSpan('process clients.create');
  span.setAttribute('payer.note', 'client 529.982.247-25 of 11.222.333/0001-81');
  span.setAttribute('tags', ['529.982.247-25', 'kept']);
  span.recordException(new Error('duplicate client 529.982.247-25'));
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'refused https://h/p?signature=s for 11.222.333/0001-81' });
  span.end();
  await telemetry.flush();

  const [exported] = telemetry.spans();
  expect(exported.attributes['payer.note']).toBe('client [tax id] of [tax id]');
  expect(exported.attributes.tags).toEqual(['[tax id]', 'kept']);
  expect(exported.events[0].attributes?.['exception.message']).toBe('duplicate client [tax id]');
  expect(String(exported.events[0].attributes?.['exception.stacktrace'])).not.toContain('529.982.247-25');
  expect(exported.status.message).toBe(`refused https://h/p${QUERY_REDACTED} for [tax id]`);
  telemetry.reset();
});

describe('redactValue', () => {
  it.each([
    ['https://erp.example/hook?token=1#frag', `https://erp.example/hook${QUERY_REDACTED}`],
    ['/downloads/1?signature=x', `/downloads/1${QUERY_REDACTED}`],
    ['/downloads/1#signature=x', `/downloads/1${QUERY_REDACTED}`],
    ['https://erp.example/hook', 'https://erp.example/hook'],
    ['select * from clients where id = $1', 'select * from clients where id = $1'],
    ['what? nothing', 'what? nothing'],
    [
      'GET https://h/a?x=1 failed, then https://h/b?y=2',
      `GET https://h/a${QUERY_REDACTED} failed, then https://h/b${QUERY_REDACTED}`,
    ],
    ['52998224725', '52998224725'],
  ])('%s -> %s', (value, expected) => {
    expect(redactValue(value)).toBe(expected);
  });
});
