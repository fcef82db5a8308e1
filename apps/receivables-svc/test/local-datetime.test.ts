import { formatLocalDateTime } from '../src/domain/local-datetime';

it('writes Brazilian civil time, with milliseconds and no zone', () => {
  expect(formatLocalDateTime(new Date('2026-11-23T15:04:05.007Z'), 'America/Sao_Paulo')).toBe(
    '2026-11-23T12:04:05.007',
  );
  expect(formatLocalDateTime(new Date('2026-01-01T02:00:00.000Z'), 'America/Sao_Paulo')).toBe(
    '2025-12-31T23:00:00.000',
  );
  expect(formatLocalDateTime(new Date('2026-11-23T15:04:05.120Z'), 'UTC')).toBe('2026-11-23T15:04:05.120');
});
