/**
 * NATS subjects, relative to the deployment's bus prefix (BUS_PREFIX, e.g. `pay`): the bus lib puts
 * `<prefix>.` in front, so several systems (or test runs) can share one NATS server without crosstalk.
 * Request-reply subjects are answered by a queue group named after the service.
 */
export const Subjects = {
  clients: {
    create: 'clients.create',
    update: 'clients.update',
    lookup: 'clients.lookup',
  },
  receivables: {
    create: 'receivables.create',
    cancel: 'receivables.cancel',
    search: 'receivables.search',
    consult: 'receivables.consult',
    installments: 'receivables.installments',
    slipPdf: 'receivables.slip-pdf',
    slipQrCode: 'receivables.slip-qrcode',
    history: 'receivables.history',
    paymentData: 'receivables.payment-data',
    detail: 'receivables.detail',
    registrationStats: 'receivables.registration-stats',
    registrationHealth: 'receivables.registration-health',
  },
  booklets: {
    request: 'booklets.request',
    download: 'booklets.download',
  },
  tenants: {
    signingSecret: 'tenants.signing-secret',
    profile: 'tenants.profile',
    providerCredentials: 'tenants.provider-credentials',
  },
  callbacks: {
    list: 'callbacks.list',
    get: 'callbacks.get',
    retry: 'callbacks.retry',
    replay: 'callbacks.replay',
    deliveryStats: 'callbacks.delivery-stats',
    deliveryHealth: 'callbacks.delivery-health',
  },
} as const;

export const QueueGroups = {
  gateway: 'gateway',
  clients: 'clients-svc',
  receivables: 'receivables-svc',
  booklets: 'booklet-svc',
  callbacks: 'callback-svc',
} as const;
