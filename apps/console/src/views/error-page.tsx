/** @jsxRuntime automatic @jsxImportSource preact */
import type { Problem } from '../gateway/problem';
import type { Flash } from '../http/context';
import type { Session } from '../session/session';
import { Layout } from './layout';
import { useFormats } from './locale';
import { MESSAGES, type MessageKey } from './messages';

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

/**
 * An error answer as a page: status, title, the detail and each field the gateway named. The title is
 * the catalog's for the status when it has one (in the request's language), else the one given; the
 * gateway's detail and field messages are its own text, shown as they came.
 */
export function ErrorPage({ status, title, detail, problem, session, flash, path }: ErrorPageProps) {
  const { t } = useFormats();
  const errors = problem?.errors ?? [];
  const key = `error.title.${status}`;
  const heading = isMessageKey(key) ? t(key) : title;
  return (
    <Layout title={heading} session={session} flash={flash} path={path}>
      <h1>{heading}</h1>
      <div class="problem" data-status={String(status)}>
        <p>
          <span class="badge">{status}</span> {detail ?? problem?.detail ?? problem?.title ?? ''}
        </p>
        {errors.length > 0 && (
          <ul>
            {errors.map((e) => (
              <li>
                <span class="mono">{e.path || e.in || t('error.request')}</span>: {e.message ?? ''}
              </li>
            ))}
          </ul>
        )}
        <p>
          <a href="/">{t('error.back')}</a>
        </p>
      </div>
    </Layout>
  );
}

function isMessageKey(key: string): key is MessageKey {
  return key in MESSAGES['pt-BR'];
}
