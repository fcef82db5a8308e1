export { startGateway, type RunningGateway } from './server';
export { loadGatewayConfig, type GatewayConfig } from './config';
export { createTenant, disableTenant, issueToken, revokeToken } from './domain/tenancy/tenant-admin';
export { openAdminDatabase } from './db/admin-database';
export { createOperator } from './domain/tenancy/operators';
export { currentProviderAccount } from './db/provider-accounts';
export { setProviderAccount, showProviderAccount } from './domain/tenancy/provider-accounts';
export { type ProviderAccountInput } from './domain/tenancy/provider-account-input';
