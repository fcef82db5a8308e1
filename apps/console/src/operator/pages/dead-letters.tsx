/** @jsxRuntime automatic @jsxImportSource preact */
import { DEAD_LETTER_PAYLOAD_MAX_BYTES } from '@payments/contracts';
import type { AdminSchemas } from '../admin-client';
import { useFormats } from '../../views/locale';
import { OperatorFrame, type PageContext } from './frame';

type DeadLetter = AdminSchemas['AdminDeadLetter'];

/**
 * Jobs the services gave up on (or poison messages), oldest first, a page at a time, each with a
 * redrive button and a link to its payload, where it may be discarded.
 */
export function DeadLettersPage({
  page,
  items,
  nextCursor,
  paged,
}: {
  page: PageContext;
  items: readonly DeadLetter[];
  /** The next page's cursor, null on the last page. */
  nextCursor: string | null;
  /** Whether this page is a later one (a link back to the first). */
  paged: boolean;
}) {
  const { t, dateTime: when } = useFormats();
  return (
    <OperatorFrame page={page} title={t('operator.deadLetters.title')}>
      <p class="muted">{t('operator.deadLetters.lead')}</p>
      {items.length === 0 ? (
        <p class="muted empty">{t('operator.deadLetters.none')}</p>
      ) : (
        <table class="dead-letters">
          <thead>
            <tr>
              <th class="num">{t('operator.deadLetters.id')}</th>
              <th>{t('operator.deadLetters.stream')}</th>
              <th>{t('operator.deadLetters.msgId')}</th>
              <th>{t('operator.deadLetters.error')}</th>
              <th class="num">{t('operator.deadLetters.failures')}</th>
              <th>{t('operator.deadLetters.since')}</th>
              <th class="num">{t('operator.deadLetters.bytes')}</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <tr key={d.id} data-dead-letter-id={d.id}>
                <td class="num">{d.id}</td>
                <td class="mono">
                  {d.stream}
                  <br />
                  {d.subject}
                </td>
                <td class="mono msg-id">{d.msg_id}</td>
                <td class="error-text">{d.error}</td>
                <td class="num">{d.failures}</td>
                <td>{when(d.dead_lettered_at)}</td>
                <td class="num">{d.bytes}</td>
                <td>
                  <form method="post" action={`/operator/dead-letters/${d.id}/redrive`} class="inline">
                    <button type="submit">{t('operator.deadLetters.redrive')}</button>
                  </form>{' '}
                  <a href={`/operator/dead-letters/${d.id}`} class="view-payload">
                    {t('operator.deadLetters.view')}
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="pages">
        {paged && <a href="/operator/dead-letters">{t('operator.deadLetters.first')}</a>}
        {nextCursor && (
          <a href={`/operator/dead-letters?${new URLSearchParams({ cursor: nextCursor }).toString()}`} rel="next">
            {t('operator.deadLetters.next')}
          </a>
        )}
      </nav>
    </OperatorFrame>
  );
}

/**
 * One dead letter with its payload (text, escaped like all text; bytes as base64), and what may be
 * done with it: redrive, or discard after ticking the confirmation (the form carries it; the route
 * checks it, since a page without script cannot ask).
 */
export function DeadLetterPage({ page, detail }: { page: PageContext; detail: AdminSchemas['AdminDeadLetterDetail'] }) {
  const { t, dateTime: when } = useFormats();
  const d = detail.dead_letter;
  return (
    <OperatorFrame page={page} title={t('operator.deadLetters.detailTitle', { id: d.id })}>
      <p>
        <a href="/operator/dead-letters">{t('operator.deadLetters.back')}</a>
      </p>
      <dl class="facts dead-letter">
        <dt>{t('operator.deadLetters.stream')}</dt>
        <dd class="mono">
          {d.stream} / {d.subject}
        </dd>
        <dt>{t('operator.deadLetters.msgId')}</dt>
        <dd class="mono msg-id">{d.msg_id}</dd>
        <dt>{t('operator.deadLetters.error')}</dt>
        <dd class="error-text">{d.error}</dd>
        <dt>{t('operator.deadLetters.failures')}</dt>
        <dd>{d.failures}</dd>
        <dt>{t('operator.deadLetters.since')}</dt>
        <dd>{when(d.dead_lettered_at)}</dd>
        <dt>{t('operator.deadLetters.bytes')}</dt>
        <dd>{d.bytes}</dd>
      </dl>
      <h2>{t('operator.deadLetters.payload')}</h2>
      {detail.payload_encoding === 'base64' && <p class="muted">{t('operator.deadLetters.payloadBase64')}</p>}
      {detail.payload_truncated && (
        <p class="muted">{t('operator.deadLetters.payloadTruncated', { bytes: DEAD_LETTER_PAYLOAD_MAX_BYTES })}</p>
      )}
      <pre class="payload" data-encoding={detail.payload_encoding}>
        {detail.payload}
      </pre>
      <div class="actions">
        <form method="post" action={`/operator/dead-letters/${d.id}/redrive`} class="inline">
          <button type="submit">{t('operator.deadLetters.redrive')}</button>
        </form>
        <form method="post" action={`/operator/dead-letters/${d.id}/discard`} class="inline discard">
          <label>
            <input type="checkbox" name="confirm" value="yes" required /> {t('operator.deadLetters.discardConfirm')}
          </label>{' '}
          <button type="submit" class="danger">
            {t('operator.deadLetters.discard')}
          </button>
        </form>
      </div>
    </OperatorFrame>
  );
}
