/** What an operator command refuses, said for the operator (the admin CLI prints it and exits 1). */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}

/** What an operator command names does not exist (no such tenant, token or dead letter): the admin API's 404. */
export class AdminNotFoundError extends AdminError {}
