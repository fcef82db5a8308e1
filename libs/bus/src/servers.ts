/**
 * The servers of NATS_URL: a comma-separated list (`nats://a:4222, nats://b:4222`), spaces and empty
 * entries ignored. nats.js is given the list, so a service starts when any one server is up; given
 * the string as it is, it would take only one of them.
 */
export function natsServers(url: string): string[] {
  return url
    .split(',')
    .map((one) => one.trim())
    .filter((one) => one.length > 0);
}
