import { PeopleConflictError } from '../../domain/people/errors';
import { inviteOperator } from '../../domain/people/invitations';
import { systemClock } from '../../domain/people/people';
import { createOperator, listOperators, revokeOperator } from '../../domain/tenancy/operators';
import { loadCredentialsKeyring } from '../../domain/tenancy/provider-accounts';
import { AdminError } from '../../domain/tenancy/tenant-admin';
import type { Commands } from './command';

/** `operator create|invite|list|revoke`. */
export const OPERATOR_COMMANDS: Commands = [
  [
    'operator create',
    async ({ db, options, operator, print }) => {
      if (!options.name)
        throw new AdminError('operator create needs --name: npm run admin -- operator create --name <name> [--json]');
      const o = await createOperator(db, options.name, operator());
      print(
        `operator_id:  ${o.operator_id}\nname:         ${o.name}\ncredential:   ${o.credential}\nStore the credential now: it is not shown again. Send it as Authorization: Bearer <credential> to the admin port (ADMIN_PORT).`,
        o,
      );
    },
  ],
  [
    'operator invite',
    async ({ db, mode, options, operator, print }) => {
      if (!options.email)
        throw new AdminError(
          'operator invite needs --email: npm run admin -- operator invite --email <e-mail> [--json]',
        );
      const deps = { db, keyring: loadCredentialsKeyring(process.env, mode), mode, clock: systemClock };
      const invitation = await inviteOperator(deps, { kind: 'operator', by: operator() }, options.email).catch(
        (err: unknown) => {
          if (err instanceof PeopleConflictError) throw new AdminError(err.message);
          throw err;
        },
      );
      print(
        `invitation for ${invitation.email} (operator), until ${invitation.expires_at}:\n` +
          `open <console>/invitations/${invitation.invitation_token}\n` +
          'The link is not shown again: give it to that person only.',
        invitation,
      );
    },
  ],
  [
    'operator list',
    async ({ db, print }) => {
      const rows = await listOperators(db);
      print(
        rows
          .map((r) => `${r.operator_id}  ${r.credential_hint}...  ${r.revoked_at ? 'revoked' : 'active '}  ${r.name}`)
          .join('\n') || '(no operators)',
        rows,
      );
    },
  ],
  [
    'operator revoke',
    async ({ db, target, operator, print }) => {
      if (!target) throw new AdminError('operator revoke needs an operator id (as operator list shows it)');
      const r = await revokeOperator(db, target, operator());
      print(`operator ${r.operator_id} (${r.name}) revoked`, { ...r, revoked: true });
    },
  ],
];
