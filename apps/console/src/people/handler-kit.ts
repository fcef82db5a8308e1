import type { ConsoleContext } from '../http/context';
import { formatsFor, localeOf } from '../views/locale';
import type { MessageKey } from '../views/messages';

/** The request's text for a catalog key: flashes and errors are in the reader's language too. */
export const text = (ctx: ConsoleContext, key: MessageKey, vars?: Record<string, string | number>) =>
  formatsFor(localeOf(ctx)).t(key, vars);
