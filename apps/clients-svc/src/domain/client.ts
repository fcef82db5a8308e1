/** A payer registered by an ERP tenant. English names; the wire mapping lives in transport/. */
export interface ClientDetails {
  name: string;
  taxId: string;
  address: string | null;
  number: string | null;
  neighborhood: string | null;
  city: string | null;
  state: string | null;
  zipCode: string | null;
  complement: string | null;
  telephone: string | null;
  phoneNumber: string | null;
  email: string | null;
}

export interface Client extends ClientDetails {
  tenantId: string;
  /** As the ERP spelled it when it created the client. */
  clientId: string;
}

export interface NewClient extends ClientDetails {
  clientId: string;
}

export interface ClientBatchResult {
  /** Clients inserted by this call, in request order. */
  created: Client[];
  /** Client ids that already existed (or repeated earlier in the batch), spelled as at creation: left unchanged. */
  alreadyRegistered: string[];
}
