import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common';
import { CallbackUrl } from './receivables';

/** POST /api/v1/bank-slip-booklet/{uuid} (spec 4.11): the uuid is the payment_slip_id. */
export const BookletRequestSchema = Type.Object(
  { url_callback: CallbackUrl('http or https URL that receives the sent callback') },
  { $id: 'BookletRequest' },
);
export type BookletRequest = Static<typeof BookletRequestSchema>;

/** 202 reply: a synchronous "preparing" answer, not a callback. */
export const BookletResponseSchema = Type.Object(
  { success: Type.Literal(true), type: Type.Literal('preparing'), message: Type.String(), payment_slip_id: Uuid() },
  { $id: 'BookletResponse' },
);
export type BookletResponse = Static<typeof BookletResponseSchema>;

/** Bus message (gateway -> booklet-svc). */
export interface BookletRequestCommand {
  tenant_id: string;
  payment_slip_id: string;
  url_callback: string;
}
