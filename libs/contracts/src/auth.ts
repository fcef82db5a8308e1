import { Type, type Static } from '@sinclair/typebox';

/** POST /api/v1/authenticate: token_type is "Bearer" (capitalised, as the spec shows). */
export const AuthenticateResponseSchema = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ minimum: 1 }),
  },
  { $id: 'AuthenticateResponse' },
);
export type AuthenticateResponse = Static<typeof AuthenticateResponseSchema>;

/** POST /api/v1/refresh-token: token_type is "bearer" (lower case, as the spec shows). */
export const RefreshTokenResponseSchema = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('bearer'),
    expires_in: Type.Integer({ minimum: 1 }),
  },
  { $id: 'RefreshTokenResponse' },
);
export type RefreshTokenResponse = Static<typeof RefreshTokenResponseSchema>;
