/**
 * A UUID in its usual text form, either case. The sandbox stands for the bank, so it keeps its own
 * reading of the ids it issues rather than our contracts'.
 */
export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
