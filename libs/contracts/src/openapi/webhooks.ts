import type { TSchema } from '@sinclair/typebox';
import {
  BookletFailedCallbackSchema,
  BookletSentCallbackSchema,
  CancellationCallbackSchema,
  CancellationFailedCallbackSchema,
  PaidCallbackSchema,
  RegisteredCallbackSchema,
  RegistrationFailedCallbackSchema,
  type CallbackEventType,
} from '../callbacks';
import type { ExampleObject } from './types';
import * as ex from './examples';

/* Webhooks (the callbacks the service sends) ------------------------------------------------------ */

export interface ApiWebhook {
  /** The event type, as GET /api/v1/callbacks reports it. */
  eventType: CallbackEventType;
  summary: string;
  description: string;
  schema: TSchema;
  example: ExampleObject;
}

export const API_WEBHOOKS: readonly ApiWebhook[] = [
  {
    eventType: 'receivable.registered',
    summary: 'A receivable was registered with the payment provider',
    description:
      'Carries the payment data: typeable line, barcode, our number, PIX copy-and-paste text, QR code image and PDF links.',
    schema: RegisteredCallbackSchema,
    example: ex.example('A hybrid slip registered', ex.registeredCallback),
  },
  {
    eventType: 'receivable.registration_failed',
    summary: 'The provider refused a receivable',
    description: 'The receivable is now rejected (Rejeitada).',
    schema: RegistrationFailedCallbackSchema,
    example: ex.example('Refused by the provider', ex.registrationFailedCallback),
  },
  {
    eventType: 'receivable.cancelled',
    summary: 'A cancellation completed',
    description: 'The receivable is now cancelled (Cancelada).',
    schema: CancellationCallbackSchema,
    example: ex.example('Cancelled', ex.cancellationCallback),
  },
  {
    eventType: 'receivable.cancellation_failed',
    summary: 'A cancellation failed',
    description: 'The receivable keeps its state.',
    schema: CancellationFailedCallbackSchema,
    example: ex.example('Not cancelled', ex.cancellationFailedCallback),
  },
  {
    eventType: 'receivable.paid',
    summary: 'A receivable was paid',
    description: 'The receivable is now approved (Aprovada); payment_type is Boleto, Pix or Manual.',
    schema: PaidCallbackSchema,
    example: ex.example('Paid by PIX', ex.paidCallback),
  },
  {
    eventType: 'booklet.sent',
    summary: 'A booklet is ready',
    description: '`download` is a signed gateway link that serves the PDF without a bearer token until it expires.',
    schema: BookletSentCallbackSchema,
    example: ex.example('Ready to download', ex.bookletSentCallback),
  },
  {
    eventType: 'booklet.failed',
    summary: 'A booklet could not be built',
    description: 'For example when every installment was cancelled or rejected.',
    schema: BookletFailedCallbackSchema,
    example: ex.example('Nothing left to print', ex.bookletFailedCallback),
  },
];
