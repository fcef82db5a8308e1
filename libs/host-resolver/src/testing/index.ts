/** For tests only: a nameserver that answers from a zone or never answers, and a held thread pool. */
export { startNameserver, type TestNameserver, type Zone } from './nameserver';
export { blockThreadPool } from './thread-pool';
