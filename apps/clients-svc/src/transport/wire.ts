import type { ClientCreateItem, ClientData, ClientUpdateRequest } from '@payments/contracts';
import type { Client, ClientDetails, NewClient } from '../domain/client';

/** Wire (spec) <-> domain mapping. The Portuguese keys of the interface spec exist only here and in contracts. */
export function detailsFromWire(w: ClientUpdateRequest): ClientDetails {
  return {
    name: w.name,
    taxId: w.cnpj_cpf,
    address: w.address ?? null,
    number: w.number ?? null,
    neighborhood: w.neighborhood ?? null,
    city: w.city ?? null,
    state: w.state ?? null,
    zipCode: w.zip_code ?? null,
    complement: w.complement ?? null,
    telephone: w.telephone ?? null,
    phoneNumber: w.phone_number ?? null,
    email: w.email ?? null,
  };
}

export function newClientFromWire(w: ClientCreateItem): NewClient {
  return { clientId: w.client_id, ...detailsFromWire(w) };
}

export function toClientData(c: Client): ClientData {
  return {
    razao: c.name,
    cnpj_cpf: c.taxId,
    endereco: c.address,
    numero: c.number,
    bairro: c.neighborhood,
    cidade: c.city,
    uf: c.state,
    cep: c.zipCode,
    complemento: c.complement,
    fone: c.telephone,
    telefone_celular: c.phoneNumber,
    email: c.email,
  };
}
