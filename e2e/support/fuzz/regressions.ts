import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FuzzCase } from './cases';

/**
 * Requests that once failed (a 5xx, something stored by a refusal), kept in regressions.json and
 * replayed on every run by e2e/test/fuzz-regressions.test.ts. A body is text, base64 bytes, or a
 * string repeated (`{ "repeat": "[", "times": 1048000 }`) so that a megabyte stays one line.
 */
export interface Regression {
  name: string;
  request: Omit<FuzzCase, 'kind' | 'description' | 'body'> & {
    body?: { text: string } | { base64: string } | { repeat: string; times: number };
  };
  /** The answer expected: its status, problem code and the path its first error names. */
  expect: { status: number; code?: string; path?: string };
}

export function loadRegressions(): Regression[] {
  return JSON.parse(readFileSync(join(__dirname, 'regressions.json'), 'utf8')) as Regression[];
}

/** The regression as a case the fuzz runner can send. */
export function regressionCase(r: Regression): FuzzCase {
  const { body, ...rest } = r.request;
  return {
    ...rest,
    kind: 'valid',
    description: r.name,
    body: body === undefined ? undefined : 'repeat' in body ? { text: body.repeat.repeat(body.times) } : body,
  };
}
