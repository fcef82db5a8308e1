import { Type, type Static } from '@sinclair/typebox';
import { ErrorCatalog, type ErrorCode } from './errors';

/** RFC 9457 problem details, the body of every error response. */
export const FieldErrorSchema = Type.Object({
  path: Type.String(),
  message: Type.String(),
  in: Type.Optional(
    Type.Union([Type.Literal('body'), Type.Literal('path'), Type.Literal('query'), Type.Literal('header')]),
  ),
});

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI reference naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Union(
      (Object.keys(ErrorCatalog) as ErrorCode[]).map((code) => Type.Literal(code)),
      { description: 'Machine-readable error code: one of a fixed list, each with its HTTP status' },
    ),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
    request_id: Type.Optional(
      Type.String({ description: 'Identifies the request in the logs; also in header X-Request-Id' }),
    ),
  },
  { $id: 'Problem' },
);
export type Problem = Static<typeof ProblemSchema>;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problemTypeUri(code: string): string {
  return `/problems/${code.replace(/_/g, '-')}`;
}
