import type { RouterContext } from '@koa/router';
import type { Session } from '../session/session';

/** A one-line message shown on the next page (after a redirect): what an action did, or why not. */
export interface Flash {
  kind: 'info' | 'error';
  text: string;
}

/** What the middleware chain learns about a request as it goes. */
export interface ConsoleState {
  /** The signed-in user, when the session cookie opened. */
  session?: Session;
  /** Messages carried over from the previous request (shown once). */
  flash: Flash[];
}

export type ConsoleContext = RouterContext<ConsoleState>;
