import type { TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../errors';
import type { ExampleObject, HttpMethod, JsonValue } from './types';

/** The shape of one public operation, and the tags that group them in the document. */
export type ApiTag = 'Authentication' | 'Clients' | 'Receivables' | 'Booklets' | 'Callbacks';

export const API_TAGS: Record<ApiTag, string> = {
  Authentication: 'Exchange the integration token for a JWT access token, and renew it.',
  Clients: 'Register and update the payers of charges.',
  Receivables: 'Charges: hybrid bank slip (slip plus PIX) or PIX; created in batches, registered asynchronously.',
  Booklets: 'Bank slip booklets (carnê): one PDF with every installment of a payment_slip_id.',
  Callbacks: 'What was sent to your url_callback: list, inspect and redeliver events.',
};

export interface ApiParameter {
  name: string;
  description: string;
  schema: TSchema;
  required: boolean;
  example: JsonValue;
}

export interface ApiRequestBody {
  description: string;
  schema: TSchema;
  examples: Record<string, ExampleObject>;
}

/** Response headers an operation may add to its success answer (X-Request-Id is on every answer). */
export type SuccessHeader = 'X-Next-Cursor' | 'Cache-Control' | 'Content-Disposition';

export interface ApiSuccess {
  status: 200 | 201 | 202;
  description: string;
  schema: TSchema;
  /** Component name for a response schema that has no $id of its own. */
  componentName?: string;
  /** application/json unless said otherwise. */
  mediaType?: string;
  /** Required for JSON answers; binary answers (the booklet PDF) have none. */
  examples?: Record<string, ExampleObject>;
  headers?: SuccessHeader[];
}

export interface ApiOperation {
  method: HttpMethod;
  /** OpenAPI path template; parameter names are the gateway's route parameter names. */
  path: string;
  operationId: string;
  tag: ApiTag;
  summary: string;
  description: string;
  /** access_token: the JWT; integration_token: the operator-issued secret; none: a signed link. */
  security: 'access_token' | 'integration_token' | 'none';
  /**
   * required: 400 without Idempotency-Key; optional: honoured when sent; none: ignored, neither stored
   * nor locked (safe operations: a repeated search just runs again).
   */
  idempotency: 'required' | 'optional' | 'none';
  pathParameters?: ApiParameter[];
  queryParameters?: ApiParameter[];
  requestBody?: ApiRequestBody;
  success: ApiSuccess;
  /** Every error code the route answers (its status follows from ErrorCatalog), with when it happens. */
  errors: Partial<Record<ErrorCode, string>>;
}

/**
 * One operation of the list, its operationId kept as a literal type: OperationId is the union of the
 * list's ids, so the gateway names an operation (and gets its method, path and idempotency from here)
 * and cannot mount a route the document does not describe.
 */
export function operation<Id extends string>(
  definition: ApiOperation & { operationId: Id },
): ApiOperation & { operationId: Id } {
  return definition;
}
