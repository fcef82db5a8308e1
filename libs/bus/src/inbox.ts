/**
 * The reply inboxes of a service: `_INBOX_<name>`, so the server config can let each service's user
 * subscribe only to its own replies (`_INBOX_<name>.>`), JetStream API replies and pulls included.
 */
export function inboxPrefixOf(name: string): string {
  return `_INBOX_${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
