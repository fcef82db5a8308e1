import { listAdminAudit, type AuditEntry } from '../../domain/tenancy/admin-audit';
import { loadCredentialsKeyring } from '../../domain/tenancy/provider-accounts';
import { reencryptSecrets } from '../../domain/tenancy/reencrypt';
import { auditLimit, type Commands } from './command';

/** `secrets reencrypt` and `audit`: sealing again after a key rotation, and who changed what. */
export const AUDIT_COMMANDS: Commands = [
  [
    'secrets reencrypt',
    async ({ db, mode, operator, print }) => {
      const r = await reencryptSecrets(db, loadCredentialsKeyring(process.env, mode), operator());
      print(
        `sealed again with key ${r.key_id}: ${r.signing_secrets} signing secrets, ${r.provider_credentials} provider credentials (${r.already_current} had it already)`,
        r,
      );
    },
  ],
  [
    'audit',
    async ({ db, options, print }) => {
      const rows = await listAdminAudit(db, { tenantId: options.tenant, limit: auditLimit(options.limit) });
      print(rows.map(describeAuditEntry).join('\n') || '(no audited actions)', rows);
    },
  ],
];

function describeAuditEntry(e: AuditEntry): string {
  const details = Object.entries(e.details)
    .map(([k, v]) => `${k}=${v === null ? '-' : String(v)}`)
    .join(' ');
  return `${e.at}  ${e.operator}  ${e.action}  ${e.tenant_id ?? '-'}  ${details}`;
}
