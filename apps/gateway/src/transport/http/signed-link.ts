import { ServiceError } from '@payments/contracts';
import { checkLink } from '@payments/signed-links';
import type { GatewayContext } from './context';

/**
 * Lets a request through only with a valid signed link for `resourceId` (its `expires` and `signature`
 * query parameters): altered or incomplete, 403; expired, 410 with `whenExpired` saying what to do.
 */
export function requireSignedLink(ctx: GatewayContext, secret: string, resourceId: string, whenExpired: string): void {
  const expires = typeof ctx.query.expires === 'string' ? ctx.query.expires : undefined;
  const signature = typeof ctx.query.signature === 'string' ? ctx.query.signature : undefined;
  const check = checkLink(secret, resourceId, expires, signature);
  if (check === 'tampered')
    throw new ServiceError('forbidden', 'this download link is not valid (altered or incomplete)');
  if (check === 'expired') throw new ServiceError('gone', `this download link has expired; ${whenExpired}`);
}
