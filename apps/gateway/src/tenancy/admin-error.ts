/** What an operator command refuses, said for the operator (the admin CLI prints it and exits 1). */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}
