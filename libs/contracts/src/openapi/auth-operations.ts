import { AuthenticateResponseSchema, RefreshTokenResponseSchema } from '../auth';
import { operation } from './operation-types';
import { GUARDED, AUTH_RATE_LIMITED, DATABASE_UNAVAILABLE } from './operation-parts';
import * as ex from './examples';

/** Authentication: the integration token for a JWT, and its renewal. In the order of the list. */
export const AUTH_OPERATIONS = [
  operation({
    method: 'post',
    path: '/api/v1/authenticate',
    operationId: 'authenticate',
    tag: 'Authentication',
    summary: 'Exchange the integration token for a JWT',
    description:
      'Send the integration token (issued by the operator, kept secret) as `Authorization: Bearer <integration token>`; no body. ' +
      'The access token answered is used as the Bearer token of every other endpoint until `expires_in` seconds have passed.',
    security: 'integration_token',
    idempotency: 'none',
    success: {
      status: 200,
      description: 'A new access token. `token_type` is `Bearer` (capitalised).',
      schema: AuthenticateResponseSchema,
      examples: { token: ex.example('An access token valid for one hour', ex.authenticateResponse) },
      headers: ['Cache-Control'],
    },
    errors: {
      unauthorized: 'no Authorization header, or the integration token is unknown or revoked',
      ...AUTH_RATE_LIMITED,
      ...DATABASE_UNAVAILABLE,
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/refresh-token',
    operationId: 'refreshToken',
    tag: 'Authentication',
    summary: 'Renew the JWT',
    description:
      'Send the current, still valid access token as the Bearer token; no body. Call it before the token expires: an expired token needs a new authentication.',
    security: 'access_token',
    idempotency: 'none',
    success: {
      status: 200,
      description: 'A new access token. `token_type` is `bearer` (lower case, as the interface has it).',
      schema: RefreshTokenResponseSchema,
      examples: { token: ex.example('A renewed access token', ex.refreshTokenResponse) },
      headers: ['Cache-Control'],
    },
    errors: {
      unauthorized: GUARDED.unauthorized,
      token_expired: GUARDED.token_expired,
      ...AUTH_RATE_LIMITED,
      ...DATABASE_UNAVAILABLE,
    },
  }),
] as const;
