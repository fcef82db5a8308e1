import { MESSAGES } from '../src/views/messages';
import {
  brasiliaInstant,
  brasiliaLocalValue,
  DEFAULT_LOCALE,
  formatsFor,
  isoDay,
  langSwitchHref,
} from '../src/views/locale';

// Expected strings are written out by hand (docs/console.md): not computed with Intl here.
const pt = formatsFor('pt-BR');
const en = formatsFor('en');

describe('money', () => {
  it('reais as R$ 1.234,56 in pt-BR with a plain space, R$1,234.56 in English', () => {
    expect(pt.money(1234.56)).toBe('R$ 1.234,56');
    expect(pt.money(0.5)).toBe('R$ 0,50');
    expect(pt.money(1_000_000)).toBe('R$ 1.000.000,00');
    expect(en.money(1234.56)).toBe('R$1,234.56');
  });

  it('123456 cents of the API (1234.56 reais) is R$ 1.234,56', () => {
    expect(pt.money(123456 / 100)).toBe('R$ 1.234,56');
  });
});

describe('dateTime: an instant in Brasília time', () => {
  it('14:05 UTC is 11:05 in Brasília', () => {
    expect(pt.dateTime('2026-11-28T14:05:00Z')).toBe('28/11/2026 11:05 (horário de Brasília)');
    expect(en.dateTime('2026-11-28T14:05:00Z')).toBe('11/28/2026 11:05 AM (Brasília time)');
  });

  it('the day changes at 03:00 UTC, and English has 12 AM and 12 PM', () => {
    expect(pt.dateTime('2026-11-28T02:59:00.000Z')).toBe('27/11/2026 23:59 (horário de Brasília)');
    expect(en.dateTime('2026-11-28T03:00:00.000Z')).toBe('11/28/2026 12:00 AM (Brasília time)');
    expect(en.dateTime('2026-11-28T15:30:00.000Z')).toBe('11/28/2026 12:30 PM (Brasília time)');
    expect(en.dateTime('2026-11-28T17:05:00.000Z')).toBe('11/28/2026 2:05 PM (Brasília time)');
  });

  it('an offset is honoured; nothing is a dash; garbage is shown as it came', () => {
    expect(pt.dateTime('2026-11-28T14:05:00+02:00')).toBe('28/11/2026 09:05 (horário de Brasília)');
    expect(pt.dateTime(null)).toBe('—');
    expect(pt.dateTime('soon')).toBe('soon');
  });
});

describe('civilDateTime: payment_date is São Paulo civil time, shown unchanged', () => {
  it('2026-11-23T16:23:51.669 is 16:23 in Brasília, whatever the host zone', () => {
    expect(pt.civilDateTime('2026-11-23T16:23:51.669')).toBe('23/11/2026 16:23 (horário de Brasília)');
    expect(en.civilDateTime('2026-11-23T16:23:51.669')).toBe('11/23/2026 4:23 PM (Brasília time)');
    expect(pt.civilDateTime('2026-11-23T00:05:00.000')).toBe('23/11/2026 00:05 (horário de Brasília)');
  });

  it('a value with a zone is an instant after all; null is a dash', () => {
    expect(pt.civilDateTime('2026-11-23T16:23:51.669Z')).toBe('23/11/2026 13:23 (horário de Brasília)');
    expect(pt.civilDateTime(null)).toBe('—');
  });
});

describe('date: a civil date, no shift', () => {
  it('dd/mm/aaaa and mm/dd/yyyy', () => {
    expect(pt.date('2026-12-01')).toBe('01/12/2026');
    expect(en.date('2026-12-01')).toBe('12/01/2026');
    expect(pt.date(undefined)).toBe('—');
  });
});

describe('numbers', () => {
  it('percent rounds down to one decimal with the locale comma', () => {
    expect(pt.percent(0.9995)).toBe('99,9%');
    expect(en.percent(0.9995)).toBe('99.9%');
    expect(pt.percent(null)).toBe('—');
  });

  it('duration and age', () => {
    expect(pt.duration(850)).toBe('850 ms');
    expect(pt.duration(1250)).toBe('1,3 s');
    expect(en.duration(1250)).toBe('1.3 s');
    expect(pt.age(3 * 3600 + 5 * 60)).toBe('3 h 05 min');
    expect(pt.age(50 * 3600)).toBe('2 d 2 h');
  });
});

describe('Brasília form values', () => {
  it('a datetime-local value typed in Brasília time is 3 hours later in UTC', () => {
    expect(brasiliaInstant('2026-11-26T09:30')).toBe('2026-11-26T12:30:00.000Z');
    expect(brasiliaInstant('2026-11-26T22:15:30')).toBe('2026-11-27T01:15:30.000Z');
    expect(brasiliaInstant('yesterday')).toBeUndefined();
    expect(brasiliaLocalValue(Date.parse('2026-11-27T01:15:00Z'))).toBe('2026-11-26T22:15');
  });

  it('today is the Brasília calendar day', () => {
    expect(isoDay(Date.parse('2026-11-28T02:00:00Z'))).toBe('2026-11-27');
    expect(isoDay(Date.parse('2026-11-28T02:00:00Z'), -29)).toBe('2026-10-29');
  });
});

describe('messages', () => {
  it('pt-BR is the default, and both languages have the same keys with the same variables', () => {
    expect(DEFAULT_LOCALE).toBe('pt-BR');
    const keys = Object.keys(MESSAGES['pt-BR']).sort();
    expect(Object.keys(MESSAGES.en).sort()).toEqual(keys);
    const vars = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort();
    for (const key of keys) {
      const k = key as keyof (typeof MESSAGES)['en'];
      expect([key, vars(MESSAGES.en[k])]).toEqual([key, vars(MESSAGES['pt-BR'][k])]);
    }
  });

  it('t substitutes variables', () => {
    expect(pt.t('layout.who.tenant', { tenantId: 'abc' })).toBe('cliente abc');
    expect(en.t('layout.who.tenant', { tenantId: 'abc' })).toBe('tenant abc');
  });

  it('the switch link returns to the page', () => {
    expect(langSwitchHref('en', '/tenant/charges')).toBe('/lang?to=en&back=%2Ftenant%2Fcharges');
  });
});
