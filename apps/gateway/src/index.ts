export { startGateway, type RunningGateway } from './server';
export { loadGatewayConfig, type GatewayConfig } from './config';
export { createTenant, disableTenant, issueToken, revokeToken } from './tenancy/tenant-admin';
export { openAdminDatabase } from './admin/admin-database';
export { createOperator } from './admin/operators';
export {
  currentProviderAccount,
  setProviderAccount,
  showProviderAccount,
  type ProviderAccountInput,
} from './tenancy/provider-accounts';
