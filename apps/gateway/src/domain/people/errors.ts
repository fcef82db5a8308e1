/**
 * The refusals of console sign-in, sessions, invitations and users. The routes say each one the admin
 * API's way (transport/http/routes/session-routes.ts); the domain names no status code.
 */

/** Unknown e-mail, wrong password or wrong TOTP code: told apart in the audit only, never to the caller. */
export class SignInRefusedError extends Error {
  override readonly name = 'SignInRefusedError';
  constructor(readonly reason: string) {
    super('the e-mail, password or TOTP code is not right');
  }
}

/** Too many failed sign-ins for this e-mail (or credential) or from this address. */
export class SignInLimitedError extends Error {
  override readonly name = 'SignInLimitedError';
  constructor(
    readonly retryAfterSeconds: number,
    what: string,
  ) {
    super(`too many failed sign-ins ${what}: try again in ${retryAfterSeconds} s`);
  }
}

/** A development-only sign-in method asked of a production gateway. */
export class SignInMethodDisabledError extends Error {
  override readonly name = 'SignInMethodDisabledError';
}

/** The session is unknown, signed out, past a limit, or its user, token, operator or tenant was revoked. */
export class SessionEndedError extends Error {
  override readonly name = 'SessionEndedError';
  constructor(message = 'this console session has ended: sign in again') {
    super(message);
  }
}

/** An unknown, used or expired invitation: all alike to the caller. */
export class InvitationNotFoundError extends Error {
  override readonly name = 'InvitationNotFoundError';
  constructor() {
    super('no open invitation has this token (unknown, already used or expired)');
  }
}

/** Input the schema let through but the rules refuse, naming the body field (a JSON pointer). */
export class PeopleInputError extends Error {
  override readonly name = 'PeopleInputError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The caller's role may not do this (a tenant_admin of another tenant, a viewer inviting). */
export class PeopleForbiddenError extends Error {
  override readonly name = 'PeopleForbiddenError';
}

/** What is asked for does not exist (a tenant, a user). */
export class PeopleNotFoundError extends Error {
  override readonly name = 'PeopleNotFoundError';
}

/** The request clashes with what is stored (an active user already has this e-mail). */
export class PeopleConflictError extends Error {
  override readonly name = 'PeopleConflictError';
}
