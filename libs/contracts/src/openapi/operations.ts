import { AUTH_OPERATIONS } from './auth-operations';
import { BOOKLET_OPERATIONS } from './booklet-operations';
import { CALLBACK_OPERATIONS } from './callback-operations';
import { CLIENT_OPERATIONS } from './client-operations';
import type { ApiOperation } from './operation-types';
import { RECEIVABLE_OPERATIONS } from './receivable-operations';

export {
  API_TAGS,
  type ApiOperation,
  type ApiParameter,
  type ApiRequestBody,
  type ApiSuccess,
  type ApiTag,
  type SuccessHeader,
} from './operation-types';
export { API_WEBHOOKS, type ApiWebhook } from './webhooks';

/**
 * The HTTP API, operation by operation: the one list the OpenAPI document is built from. The
 * gateway's tests check it against the routes the gateway really mounts, both ways. The document
 * follows the order of this list, so the groups stay in this order.
 */
export const API_OPERATIONS = [
  ...AUTH_OPERATIONS,
  ...CLIENT_OPERATIONS,
  ...RECEIVABLE_OPERATIONS,
  ...BOOKLET_OPERATIONS,
  ...CALLBACK_OPERATIONS,
] as const;

/** The id of an operation of API_OPERATIONS. */
export type OperationId = (typeof API_OPERATIONS)[number]['operationId'];

/** The operation of an id. */
export function apiOperation(id: OperationId): ApiOperation {
  const found = API_OPERATIONS.find((candidate) => candidate.operationId === id);
  if (!found) throw new Error(`no operation ${id}`);
  return found;
}

/** The path of an operation as a router writes it: `{uuid}` becomes `:uuid`. */
export function routerPath(operation: ApiOperation): string {
  return operation.path.replace(/\{([a-z_]+)\}/g, ':$1');
}
