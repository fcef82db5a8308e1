/** @jsxRuntime automatic @jsxImportSource preact */
import type { AdminSchemas } from '../admin-client';
import { useFormats } from '../../views/locale';
import { OperatorFrame, type PageContext } from './frame';

type DeadLetter = AdminSchemas['AdminDeadLetter'];

/** Jobs the services gave up on (or poison messages), oldest first, each with a redrive button. */
export function DeadLettersPage({
  page,
  items,
  limit,
}: {
  page: PageContext;
  items: readonly DeadLetter[];
  limit: number;
}) {
  const { dateTime: when } = useFormats();
  return (
    <OperatorFrame page={page} title="Dead letters">
      <p class="muted">
        Jobs whose handler failed too many times, and messages no service could read. Redrive publishes one again to its
        stream (under a new message id) and removes it here; a job that fails again comes back.
      </p>
      {items.length === 0 ? (
        <p class="muted empty">No dead letters.</p>
      ) : (
        <table class="dead-letters">
          <thead>
            <tr>
              <th class="num">Id</th>
              <th>Stream / subject</th>
              <th>Message id</th>
              <th>Error</th>
              <th class="num">Failures</th>
              <th>Dead since</th>
              <th class="num">Bytes</th>
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
                    <button type="submit">Redrive</button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {items.length >= limit && <p class="muted">The {limit} oldest are listed; redrive or clear them to see more.</p>}
    </OperatorFrame>
  );
}
