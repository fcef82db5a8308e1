import { deadLetterId, describeDeadLetter, discardDeadLetter, listDeadLetters, redriveDeadLetter } from '../bus/jobs';
import { auditLimit, type Commands } from './command';

/** `jobs dead|redrive|discard`: the bus's dead letters. */
export const JOBS_COMMANDS: Commands = [
  [
    'jobs dead',
    async ({ options, bus, print }) => {
      const rows = await listDeadLetters(await bus(), auditLimit(options.limit));
      print(rows.map(describeDeadLetter).join('\n') || '(no dead letters)', rows);
    },
  ],
  [
    'jobs redrive',
    async ({ db, target, operator, bus, print }) => {
      const id = deadLetterId(target);
      const r = await redriveDeadLetter(db, await bus(), id, operator());
      print(
        `dead letter ${r.id} published again to ${r.stream} as ${r.msg_id}${r.duplicate ? ' (the stream had it already)' : ''}`,
        r,
      );
    },
  ],
  [
    'jobs discard',
    async ({ db, target, operator, bus, print }) => {
      const r = await discardDeadLetter(db, await bus(), deadLetterId(target, 'discard'), operator());
      print(`dead letter ${r.id} discarded`, r);
    },
  ],
];
