import { randomUUID } from 'node:crypto';
import type { components } from '@payments/sdk';

/** A client creation item, as the SDK types it from the OpenAPI document. */
export type ClientItem = components['schemas']['ClientCreateItem'];

/** A receivable creation item. */
export type ReceivableItem = components['schemas']['ReceivableCreateItem'];

/** What the demo does with a charge after it is registered. */
export type ChargeRole = 'installment' | 'pay' | 'cancel' | 'keep';

export interface PlannedCharge {
  role: ChargeRole;
  label: string;
  payload: ReceivableItem;
}

export interface DemoPlan {
  emissionDate: string;
  clients: ClientItem[];
  charges: PlannedCharge[];
  /** Shared by the installments: the booklet (carnê) to build. */
  bookletSlipId: string;
}

/** Today's date where the charges are issued (Brazilian civil time), YYYY-MM-DD. */
export function todayInBrazil(now = new Date()): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/Sao_Paulo',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Two clients (a person by CPF, a company by alphanumeric CNPJ) and six charges, fresh ids each run. */
export function buildPlan(urlCallback: string, emissionDate = todayInBrazil()): DemoPlan {
  const person: ClientItem = {
    client_id: randomUUID(),
    name: 'Maria da Silva',
    cnpj_cpf: '529.982.247-25',
    address: 'Avenida Paulista',
    number: '1000',
    neighborhood: 'Bela Vista',
    city: 'São Paulo',
    state: 'SP',
    zip_code: '01310-100',
    email: 'maria@example.com',
    return_client_data: true,
  };
  const company: ClientItem = {
    client_id: randomUUID(),
    name: 'Padaria Alfa Ltda',
    cnpj_cpf: '12.ABC.345/01DE-35',
    city: 'Campinas',
    state: 'SP',
  };
  const bookletSlipId = randomUUID();
  const charge = (
    role: ChargeRole,
    label: string,
    fields: Omit<ReceivableItem, 'url_callback' | 'account_receivable_id' | 'emission_date' | 'payment_slip_id'> & {
      payment_slip_id?: string;
    },
  ): PlannedCharge => ({
    role,
    label,
    payload: {
      url_callback: urlCallback,
      account_receivable_id: randomUUID(),
      payment_slip_id: randomUUID(),
      emission_date: emissionDate,
      ...fields,
    },
  });
  const installment = (n: number): PlannedCharge =>
    charge('installment', `installment ${n}/3`, {
      client_id: person.client_id,
      payment_slip_id: bookletSlipId,
      payment_method: 1,
      due_date: addDays(emissionDate, 30 * n),
      value: 150.75,
      items: [{ description: `Mensalidade ${n}/3`, quantity: 1, price: 150.75 }],
      fine_value: 2,
      interest_amount: 0.05,
      ...(n === 1
        ? { discount_type: 'ValorFixoAteDataInformada', discount_date: addDays(emissionDate, 25), discount_value: 5 }
        : { discount_type: 'NaoTemDesconto' }),
    });
  return {
    emissionDate,
    clients: [person, company],
    bookletSlipId,
    charges: [
      installment(1),
      installment(2),
      installment(3),
      charge('pay', 'PIX to be paid', {
        client_id: company.client_id,
        payment_method: 3,
        due_date: addDays(emissionDate, 5),
        value: 89.9,
        discount_type: 'NaoTemDesconto',
      }),
      charge('cancel', 'slip to be cancelled', {
        client_id: company.client_id,
        payment_method: 1,
        due_date: addDays(emissionDate, 15),
        value: 1200,
        discount_type: 'ValorFixoAteDataInformada',
        discount_date: addDays(emissionDate, 10),
        discount_value: 50,
        fine_value: 2,
        interest_amount: 0.4,
        items: [{ description: 'Farinha de trigo (saca 50 kg)', quantity: 8, price: 150 }],
      }),
      charge('keep', 'PIX left open', {
        client_id: person.client_id,
        payment_method: 3,
        due_date: addDays(emissionDate, 10),
        value: 45,
        discount_type: 'NaoTemDesconto',
      }),
    ],
  };
}

export function chargeWithRole(plan: DemoPlan, role: ChargeRole): PlannedCharge {
  const found = plan.charges.find((c) => c.role === role);
  if (!found) throw new Error(`the plan has no charge to ${role}`);
  return found;
}
