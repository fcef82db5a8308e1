import { ServiceError } from '@payments/contracts';
import { toServiceError } from '../src/transport/http/error-handler';

/** docs/architecture.md: whatever a library throws for a bad request stays a 4xx; only the unexpected is a 500. */
describe('toServiceError', () => {
  const withStatus = (status: number, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error('boom'), { status, ...extra });

  it('keeps ServiceErrors as they are', () => {
    const err = new ServiceError('not_found', 'no such thing');
    expect(toServiceError(err)).toBe(err);
  });

  it('maps a thrown 4xx status to its catalog code, showing the message only when exposed', () => {
    expect(toServiceError(withStatus(404))).toMatchObject({ code: 'not_found', detail: 'Not Found' });
    expect(toServiceError(withStatus(400, { expose: true }))).toMatchObject({ code: 'malformed_json', detail: 'boom' });
    expect(toServiceError(withStatus(400))).toMatchObject({
      code: 'malformed_json',
      detail: 'the request is malformed',
    });
    expect(toServiceError(withStatus(408))).toMatchObject({ code: 'request_timeout' });
    expect(toServiceError(withStatus(413))).toMatchObject({ code: 'payload_too_large' });
    expect(toServiceError(Object.assign(new Error('x'), { statusCode: 415 }))).toMatchObject({
      code: 'unsupported_media_type',
    });
    // A 4xx without a code of its own is still the client's fault.
    expect(toServiceError(withStatus(418)).status).toBe(400);
  });

  it('answers 500 for anything else, including a stack overflow', () => {
    expect(toServiceError(new RangeError('Maximum call stack size exceeded')).code).toBe('internal_error');
    expect(toServiceError(withStatus(502)).code).toBe('internal_error');
    expect(toServiceError(undefined).code).toBe('internal_error');
    expect(toServiceError('a string').code).toBe('internal_error');
  });
});
