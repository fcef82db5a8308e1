export { buildOpenApiDocument, OPENAPI_DOCUMENT_PATH, API_DOCS_PATH, OPENAPI_VERSION } from './document';
export {
  API_OPERATIONS,
  API_WEBHOOKS,
  API_TAGS,
  apiOperation,
  routerPath,
  type ApiOperation,
  type OperationId,
  type ApiWebhook,
  type ApiParameter,
  type ApiTag,
} from './operations';
export type * from './types';
export { ADMIN_OPERATIONS, buildAdminOpenApiDocument, type AdminOperation } from './admin-document';
export { CONSOLE_SESSION_OPERATIONS } from './console-sessions-document';
