/** The credential of an `Authorization: Bearer <credential>` header, if the header has that form. */
export function bearerCredential(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}
