import { standardViolations } from '@payments/pix-api';
import { invalid, type Violacao } from '../../domain/pix/problems';

/**
 * Requests checked against the standard's schemas, generated from its OpenAPI document in libs/pix-api
 * (never from an adapter): each violation in the standard's words, `{ propriedade, razao }`.
 */
export function schemaViolations(schemaName: string, value: unknown): Violacao[] {
  return standardViolations(schemaName, value).map((v) => ({
    propriedade: v.path.replace(/^\//, '').replace(/\//g, '.') || 'body',
    razao: v.message,
  }));
}

/** `value` as `T` when it satisfies the standard's schema `schemaName`; else 400 of `errorType`. */
export function checked<T>(schemaName: string, errorType: string, value: unknown): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(errorType, [{ propriedade: 'body', razao: 'o corpo da requisição deve ser um objeto JSON' }]);
  const found = schemaViolations(schemaName, value);
  if (found.length > 0) throw invalid(errorType, found);
  return value as T;
}
