import { INTEGRATION_TOKEN_PREFIX } from '../../domain/tenancy/credentials';
import { AdminError, issueToken, listTokens, revokeToken } from '../../domain/tenancy/tenant-admin';
import type { Commands } from './command';
import { readSecretFiles, UsageError } from './secret-files';

/** `token create|list|revoke`. */
export const TOKEN_COMMANDS: Commands = [
  [
    'token create',
    async ({ db, options, operator, print }) => {
      if (!options.tenant)
        throw new AdminError(
          'token create needs --tenant: npm run admin -- token create --tenant <tenant_id> [--json]',
        );
      const t = await issueToken(db, options.tenant, operator());
      print(
        `token_id:           ${t.token_id}\nintegration_token:  ${t.integration_token}\nStore it now: it is not shown again.`,
        t,
      );
    },
  ],
  [
    'token list',
    async ({ db, options, print }) => {
      if (!options.tenant)
        throw new AdminError('token list needs --tenant: npm run admin -- token list --tenant <tenant_id> [--json]');
      const rows = await listTokens(db, options.tenant);
      print(
        rows.map((r) => `${r.token_id}  ${r.token_hint}...  ${r.revoked_at ? 'revoked' : 'active'}`).join('\n') ||
          '(no tokens)',
        rows,
      );
    },
  ],
  [
    'token revoke',
    async ({ db, target, operator, print }) => {
      if (!target) throw new AdminError('token revoke needs a token id (or -, and the token on stdin)');
      const r = await revokeToken(db, revokeTarget(target), operator());
      print(`token ${r.token_id} of tenant ${r.tenant_id} revoked`, { ...r, revoked: true });
    },
  ],
];

/** `token revoke`: a token id, or `-` to read the token (or id) from stdin; the token itself never on the command line. */
function revokeTarget(target: string): string {
  if (target === '-') {
    const read = readSecretFiles({ token: '-' }).token?.trim();
    if (!read) throw new UsageError('token revoke -: stdin held no token');
    return read;
  }
  if (target.startsWith(INTEGRATION_TOKEN_PREFIX))
    throw new UsageError(
      'an integration token is never taken on the command line (shell history, ps): pass its token_id, or - and the token on stdin',
    );
  return target;
}
