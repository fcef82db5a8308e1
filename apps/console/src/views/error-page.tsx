/** @jsxRuntime automatic @jsxImportSource preact */
import type { Problem } from '../gateway/problem';
import type { Flash } from '../http/context';
import type { Session } from '../session/codec';
import { Layout } from './layout';

export interface ErrorPageProps {
  status: number;
  title: string;
  /** What went wrong, in words (a gateway problem's detail, shown as text). */
  detail?: string;
  /** The gateway's problem document, when the gateway refused the call. */
  problem?: Problem;
  session?: Session;
  flash?: readonly Flash[];
  path?: string;
}

/** An error answer as a page: status, title, the detail and each field the gateway named. */
export function ErrorPage({ status, title, detail, problem, session, flash, path }: ErrorPageProps) {
  const errors = problem?.errors ?? [];
  return (
    <Layout title={title} session={session} flash={flash} path={path}>
      <h1>{title}</h1>
      <div class="problem" data-status={String(status)}>
        <p>
          <span class="badge">{status}</span> {detail ?? problem?.detail ?? problem?.title ?? ''}
        </p>
        {errors.length > 0 && (
          <ul>
            {errors.map((e) => (
              <li>
                <span class="mono">{e.path || e.in || 'request'}</span>: {e.message ?? ''}
              </li>
            ))}
          </ul>
        )}
        <p>
          <a href="/">Back to the console</a>
        </p>
      </div>
    </Layout>
  );
}
