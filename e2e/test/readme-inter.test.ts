import { documentedBlockTest } from '../support/readme-block';

/*
 * The Inter path of docs/providers/accounts.md is run as written: the block marked <!-- accounts-inter -->
 * is pasted into bash against a real `npm start` (its own ports, database and bus prefix), as a new user
 * would: an integration from the sandbox, the tenant's inter account set with the admin CLI, a charge
 * issued and paid with its paid callback, Inter's refusals at intake, and with every notice dropped a
 * payment that reaches the ERP only through reconciliation. It needs bash and curl; without curl the
 * test is skipped, saying so.
 */
const block = { file: 'docs/providers/accounts.md', marker: 'accounts-inter' };

documentedBlockTest(
  block,
  'inter',
  'Inter',
  'the Inter path of the provider accounts page runs as written against npm start',
  (output) => {
    expect(output).toContain('"provider":"inter"');
    // Issued and paid with its notice, then refused at intake, then paid with every notice dropped.
    expect(output.match(/"type":"paid"/g)).toHaveLength(2);
    expect(output).toMatch(/"path":"\/0\/client_id"/);
    expect(output).toMatch(/"path":"\/1\/value"/);
    expect(output).toContain(' -> HTTP 422');
    expect(output).toContain('"drop_webhooks":true');
    expect(output).toMatch(/"amount_paid":100[,}]/);
  },
);
