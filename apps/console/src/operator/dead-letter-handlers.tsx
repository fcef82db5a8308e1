/** @jsxRuntime automatic @jsxImportSource preact */
import type { ConsoleContext } from '../http/context';
import { BadInputError } from '../http/errors';
import { readForm, single } from '../http/form';
import { formatsFor, localeOf } from '../views/locale';
import { render } from '../views/render';
import { expectData } from './admin-client';
import type { OperatorKit } from './handler-kit';
import { DeadLetterPage, DeadLettersPage } from './pages/dead-letters';

/** Dead letters per page. */
const DEAD_LETTERS_PAGE = 100;

/** GET /dead-letters: a page of them. */
export async function deadLettersPage({ api, page }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const cursor = single(ctx.query.cursor);
  const { items, next_cursor } = await expectData(
    'list dead letters',
    api(ctx).GET('/admin/v1/dead-letters', { params: { query: { cursor, limit: DEAD_LETTERS_PAGE } } }),
  );
  render(
    ctx,
    <DeadLettersPage page={page(ctx)} items={items} nextCursor={next_cursor ?? null} paged={cursor !== undefined} />,
  );
}

/** GET /dead-letters/:id: one, with its message. */
export async function deadLetterPage({ api, page }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const id = deadLetterId(ctx.params.id);
  const detail = await expectData(
    'show dead letter',
    api(ctx).GET('/admin/v1/dead-letters/{dead_letter_id}', { params: { path: { dead_letter_id: id } } }),
  );
  render(ctx, <DeadLetterPage page={page(ctx)} detail={detail} />);
}

/** POST /dead-letters/:id/redrive: publishes its message again. */
export async function redriveDeadLetter({ api, flash }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const id = deadLetterId(ctx.params.id);
  const result = await expectData(
    'redrive dead letter',
    api(ctx).POST('/admin/v1/dead-letters/{dead_letter_id}/redrive', { params: { path: { dead_letter_id: id } } }),
  );
  const { t } = formatsFor(localeOf(ctx));
  const vars = { id, stream: result.stream, msgId: result.msg_id };
  flash(
    ctx,
    'info',
    t(result.duplicate ? 'operator.deadLetters.redrivenDuplicate' : 'operator.deadLetters.redriven', vars),
  );
  ctx.redirect('/operator/dead-letters');
}

/**
 * POST /dead-letters/:id/discard. Discarding cannot be undone: the form's confirmation box must be
 * ticked (checked here too, not only by the browser's `required`).
 */
export async function discardDeadLetter({ api, flash }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const id = deadLetterId(ctx.params.id);
  const { t } = formatsFor(localeOf(ctx));
  if (single((await readForm(ctx)).get('confirm')) !== 'yes')
    throw new BadInputError('confirm', t('operator.deadLetters.mustConfirm'));
  await expectData(
    'discard dead letter',
    api(ctx).POST('/admin/v1/dead-letters/{dead_letter_id}/discard', { params: { path: { dead_letter_id: id } } }),
  );
  flash(ctx, 'info', t('operator.deadLetters.discarded', { id }));
  ctx.redirect('/operator/dead-letters');
}

/** :id of a dead letter, a positive integer. */
function deadLetterId(text: string | undefined): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id < 1) throw new BadInputError('id', 'a dead letter id is a positive integer');
  return id;
}
