// Kept only while db/migrations.ts still imports this path: the rules are in domain/tenancy/.
export { sealSigningSecret } from '../domain/tenancy/signing-secrets';
