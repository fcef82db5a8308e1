import type { ChargeResponse } from '@payments/bank-sandbox';
import type {
  CancellationCallback,
  CancellationFailedCallback,
  PaidCallback,
  RegisteredCallback,
  RegistrationFailedCallback,
} from '@payments/contracts';
import type { CallbackReceiver } from './receiver';

/** Every callback body a receivable causes (libs/contracts), as an ERP receives it. */
export type ReceivableCallback =
  RegisteredCallback | RegistrationFailedCallback | CancellationCallback | CancellationFailedCallback | PaidCallback;
export type CancellationResult = CancellationCallback | CancellationFailedCallback;

export const isRegistered = (c: ReceivableCallback): c is RegisteredCallback =>
  'type' in c && c.type === 'registered' && c.success;
export const isRegistrationFailed = (c: ReceivableCallback): c is RegistrationFailedCallback =>
  'type' in c && c.type === 'registered' && !c.success;
export const isPaid = (c: ReceivableCallback): c is PaidCallback => 'type' in c && c.type === 'paid';
export const isCancellationResult = (c: ReceivableCallback): c is CancellationResult => 'status' in c;

/** The callback as a registered one (with its payment data); throws, naming what it is instead, otherwise. */
export function asRegistered(c: ReceivableCallback | undefined): RegisteredCallback {
  if (c === undefined || !isRegistered(c)) throw new Error(`not a registered callback: ${JSON.stringify(c)}`);
  return c;
}

/** The receivable callbacks a receiver got, parsed, in arrival order; only those of one receivable when given. */
export function receivableCallbacks(receiver: CallbackReceiver, accountReceivableId?: string): ReceivableCallback[] {
  return receiver.received
    .map((r) => JSON.parse(r.body) as ReceivableCallback)
    .filter((c) => accountReceivableId === undefined || c.accounts_receivable_id === accountReceivableId);
}

/** Pays a charge at the bank sandbox (its fixed control endpoint, docs/api.md, "The bank sandbox"). */
export async function payAtSandbox(
  sandboxUrl: string,
  ourNumber: string,
  method: 'boleto' | 'pix' | 'manual',
  amount?: number,
): Promise<{ status: number; charge: ChargeResponse }> {
  const res = await fetch(`${sandboxUrl}/sandbox/charges/${ourNumber}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(amount === undefined ? { method } : { method, amount }),
  });
  return { status: res.status, charge: (await res.json()) as ChargeResponse };
}

/** Switches how the bank sandbox answers registrations from now on. */
export async function setSandboxMode(sandboxUrl: string, mode: 'normal' | 'reject' | 'slow' | 'down'): Promise<void> {
  const res = await fetch(`${sandboxUrl}/sandbox/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode }),
  });
  if (res.status !== 200) throw new Error(`sandbox behaviour ${mode}: ${res.status}`);
}
