import type { Context, Next } from 'koa';
import { open, seal } from '@payments/credential-seal';
import type { ConsoleState, Flash } from './context';
import { clearCookie, FLASH_COOKIE, readCookie, setCookie } from './cookies';

const FLASH_PURPOSE = 'console-flash/v1';
const FLASH_MAX_AGE_SECONDS = 60;

/**
 * One-shot messages across a redirect (POST, then GET the page that says what happened), kept in a
 * sealed cookie: text the page did not write itself (a gateway's detail) cannot be planted by a link.
 */
export class Flashes {
  constructor(
    private readonly key: Buffer,
    private readonly secure: boolean,
  ) {}

  /** Reads and clears the previous request's messages into ctx.state.flash. */
  middleware() {
    return async (ctx: Context & { state: ConsoleState }, next: Next) => {
      ctx.state.flash = [];
      const value = readCookie(ctx, FLASH_COOKIE);
      if (value) {
        ctx.state.flash = this.open(value);
        clearCookie(ctx, FLASH_COOKIE, this.secure);
      }
      await next();
    };
  }

  /** Shows `text` on the next page this browser loads. */
  add(ctx: Context, kind: Flash['kind'], text: string): void {
    setCookie(ctx, FLASH_COOKIE, seal(this.key, JSON.stringify([{ kind, text }]), FLASH_PURPOSE), {
      secure: this.secure,
      maxAgeSeconds: FLASH_MAX_AGE_SECONDS,
    });
  }

  private open(value: string): Flash[] {
    try {
      const parsed: unknown = JSON.parse(open(this.key, value, FLASH_PURPOSE));
      if (!Array.isArray(parsed)) return [];
      return parsed
        .filter(
          (f): f is Flash =>
            typeof f === 'object' &&
            f !== null &&
            (f.kind === 'info' || f.kind === 'error') &&
            typeof f.text === 'string',
        )
        .slice(0, 5);
    } catch {
      return [];
    }
  }
}
