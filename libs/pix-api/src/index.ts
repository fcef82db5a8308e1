// The Central Bank's PIX API standard (bacen/pix-api) as the one source of truth for its paths, schemas and
// our mapping to it. No transport: this lib builds requests and reads answers; the caller sends them.
export { PIX_STANDARD_VERSION, PIX_STANDARD_SOURCE } from './version';
export { standardSchemas } from './schemas';
export { standardDefinitions } from './generated/standard-schemas';
export { standardViolations, standardSchemaNames, type PixViolation } from './validate';
export { txidFor, receivableIdOfTxid } from './txid';
export {
  PIX_SCOPES,
  PIX_DIALECTS,
  dialectOf,
  type PixDialect,
  type PixDialectName,
  type DialectDifference,
  type RequestsPerMinute,
} from './dialects';
export { PIX_PATHS, listQuery, receivedQuery } from './paths';
export { COBV_STATUS, REFUND_STATUS, type CobvStatus, type RefundStatus } from './status';
export { FINE_MODALITY, INTEREST_MODALITY, DISCOUNT_MODALITY } from './modalities';
export {
  cobvBody,
  cancelBody,
  refundBody,
  webhookBody,
  DAYS_PAYABLE_AFTER_DUE,
  type CobvTerms,
  type CobvPayer,
} from './cobv';
export {
  readCobv,
  readReceivedPage,
  readWebhook,
  readPixNotice,
  readReceived,
  readRefund,
  readProblem,
  PixAnswerError,
  type CobvView,
  type ReceivedPix,
  type PixRefund,
  type ReceivedPage,
  type PixProblem,
} from './readers';
export { decimalOf, centsOf } from './money';
