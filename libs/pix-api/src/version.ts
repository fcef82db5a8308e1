/** The version of the Central Bank's PIX API document our copy (openapi/openapi.yaml) is taken from. */
export const PIX_STANDARD_VERSION = '2.9.0';

/** Where that document comes from, so anyone can compare our copy with it (see openapi/FIXES.md). */
export const PIX_STANDARD_SOURCE = {
  repository: 'https://github.com/bacen/pix-api',
  commit: '1f1b568f6adf5b55a6268efbaf62802a14b01941',
  path: 'openapi.yaml',
  /** The git blob id of that file at that commit. */
  blob: 'dbcbc4a3f682b1cb31608b71baefdff4e9a98346',
} as const;
