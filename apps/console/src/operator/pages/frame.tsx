/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { Flash } from '../../http/context';
import type { OperatorSession } from '../../session/session';
import { Layout } from '../../views/layout';

/** What every operator page gets from the request: the session, the flash messages and the path. */
export interface PageContext {
  session: OperatorSession;
  flash: readonly Flash[];
  path: string;
}

/** An operator page: the console's layout with the operator's navigation, and a heading. */
export function OperatorFrame({
  page,
  title,
  children,
}: {
  page: PageContext;
  title: string;
  children?: ComponentChildren;
}) {
  return (
    <Layout title={title} session={page.session} flash={page.flash} path={page.path}>
      <h1>{title}</h1>
      {children}
    </Layout>
  );
}
