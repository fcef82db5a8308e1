/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { Flash } from '../http/context';
import { OPERATOR_NAV } from '../operator/nav';
import type { Session } from '../session/codec';
import { STYLESHEET_PATH } from './stylesheet';

export const TENANT_NAV: ReadonlyArray<{ href: string; label: string }> = [
  { href: '/tenant/charges', label: 'Charges' },
  { href: '/tenant/callbacks', label: 'Callbacks' },
  { href: '/tenant/booklets', label: 'Booklets' },
];

export interface LayoutProps {
  title: string;
  session?: Session;
  flash?: readonly Flash[];
  /** The request path: marks the current navigation entry. */
  path?: string;
  children?: ComponentChildren;
}

/** Every page: header with the role's navigation and logout, the flash messages, then the page. */
export function Layout({ title, session, flash = [], path = '', children }: LayoutProps) {
  const nav = session?.role === 'tenant' ? TENANT_NAV : session?.role === 'operator' ? OPERATOR_NAV : [];
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${title} · Payments console`}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        {/* No favicon request (it would be a 404 on every page). */}
        <link rel="icon" href="data:," />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/">
            Payments console
          </a>
          <nav aria-label="main">
            {nav.map((item) => (
              <a
                href={item.href}
                class={path === item.href || path.startsWith(`${item.href}/`) ? 'current' : undefined}
              >
                {item.label}
              </a>
            ))}
          </nav>
          {session && (
            <div class="who">
              <span>{session.role === 'tenant' ? `tenant ${session.tenantId}` : 'operator'}</span>
              <form method="post" action="/logout" class="inline">
                <button type="submit" class="secondary">
                  Log out
                </button>
              </form>
            </div>
          )}
        </header>
        <main>
          {flash.map((f) => (
            <p class={`flash ${f.kind}`} role={f.kind === 'error' ? 'alert' : 'status'}>
              {f.text}
            </p>
          ))}
          {children}
        </main>
      </body>
    </html>
  );
}
