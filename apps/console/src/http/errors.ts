/** Errors the console's own handlers throw; the error page shows their message (escaped). */
export class ConsoleError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class NotFoundError extends ConsoleError {
  override readonly name = 'NotFoundError';
  constructor(message = 'There is nothing at this address.') {
    super(404, message);
  }
}

export class ForbiddenError extends ConsoleError {
  override readonly name = 'ForbiddenError';
  constructor(message: string) {
    super(403, message);
  }
}

/** A form field the user must correct; the page says which. */
export class BadInputError extends ConsoleError {
  override readonly name = 'BadInputError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(400, `${field}: ${message}`);
  }
}
