import { Type, type Static } from '@sinclair/typebox';
import { ReceivableStates } from './receivables';

const StateSchema = Type.Union(
  ReceivableStates.map((s) => Type.Literal(s)),
  { description: 'Internal state name' },
);

export const ReceivableHistoryEntrySchema = Type.Object(
  {
    at: Type.String({ format: 'date-time', description: 'When, ISO 8601' }),
    from_state: Type.Union([StateSchema, Type.Null()]),
    to_state: StateSchema,
    reason: Type.String(),
  },
  { $id: 'ReceivableHistoryEntry' },
);
export type ReceivableHistoryEntry = Static<typeof ReceivableHistoryEntrySchema>;

/** 200 of GET /api/v1/accounts-receivable/{uuid}/history: its state changes, oldest first. */
export const ReceivableHistorySchema = Type.Object(
  { items: Type.Array(ReceivableHistoryEntrySchema) },
  { $id: 'ReceivableHistory' },
);
export type ReceivableHistory = Static<typeof ReceivableHistorySchema>;

/** gateway -> receivables-svc: the history of a tenant's receivable, by the ERP's id (404 when not the tenant's). */
export interface ReceivableHistoryCommand {
  tenant_id: string;
  account_receivable_id: string;
}
