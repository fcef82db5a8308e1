/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { Flash } from '../http/context';
import { OPERATOR_NAV } from '../operator/nav';
import type { Session } from '../session/session';
import { langSwitchHref, useFormats } from './locale';
import type { MessageKey } from './messages';
import { STYLESHEET_PATH } from './stylesheet';

/** A navigation entry: its text is the catalog's `key` when it has one, else `label` as written. */
export interface NavItem {
  href: string;
  label: string;
  key?: MessageKey;
}

export const TENANT_NAV: readonly NavItem[] = [
  { href: '/tenant/charges', label: 'Charges', key: 'layout.nav.charges' },
  { href: '/tenant/callbacks', label: 'Callbacks', key: 'layout.nav.callbacks' },
  { href: '/tenant/booklets', label: 'Booklets', key: 'layout.nav.booklets' },
  { href: '/tenant/users', label: 'Users', key: 'layout.nav.users' },
];

export interface LayoutProps {
  title: string;
  session?: Session;
  flash?: readonly Flash[];
  /** The request path: marks the current navigation entry. */
  path?: string;
  children?: ComponentChildren;
}

/**
 * Every page: header with the role's navigation, the language switch and logout, the flash messages,
 * then the page. In the request's language (render() provides it).
 */
export function Layout({ title, session, flash = [], path = '', children }: LayoutProps) {
  const { t, locale } = useFormats();
  const nav: readonly NavItem[] =
    session?.role === 'tenant'
      ? // Only a tenant admin manages the tenant's users.
        TENANT_NAV.filter((item) => item.href !== '/tenant/users' || session.tenantRole === 'tenant_admin')
      : session?.role === 'operator'
        ? OPERATOR_NAV
        : [];
  const other = locale === 'pt-BR' ? 'en' : 'pt-BR';
  return (
    <html lang={locale}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${title} · ${t('layout.titleSuffix')}`}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        {/* No favicon request (it would be a 404 on every page). */}
        <link rel="icon" href="data:," />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/">
            {t('layout.brand')}
          </a>
          <nav aria-label={t('layout.nav.main')}>
            {nav.map((item) => (
              <a
                href={item.href}
                class={path === item.href || path.startsWith(`${item.href}/`) ? 'current' : undefined}
              >
                {item.key ? t(item.key) : item.label}
              </a>
            ))}
          </nav>
          <a class="lang" href={langSwitchHref(other, path || '/')} hreflang={other} lang={other}>
            {t(other === 'en' ? 'layout.switchToEnglish' : 'layout.switchToPortuguese')}
          </a>
          {session && (
            <div class="who">
              <span>
                {session.user
                  ? t('layout.who.person', {
                      name: session.user.name,
                      where:
                        session.role === 'tenant' ? (session.tenantName ?? session.tenantId) : t('layout.who.operator'),
                    })
                  : session.role === 'tenant'
                    ? t('layout.who.tenant', { tenantId: session.tenantId })
                    : t('layout.who.operator')}
              </span>
              <form method="post" action="/logout" class="inline">
                <button type="submit" class="secondary">
                  {t('layout.logout')}
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
