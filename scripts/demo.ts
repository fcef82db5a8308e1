/**
 * `npm run demo`: walks a running system (`npm start`) through a whole ERP session, one printed line
 * per step with its time: tenant (admin CLI), JWT, clients, a mixed batch of charges, their signed
 * callbacks, a payment at the bank sandbox, a cancellation, a booklet PDF, search and consult.
 * Exits 0 when every step passed; otherwise 1, naming the step that failed (2: bad options).
 */
import { formatTypeableLine, pixPrefix, reais } from './demo/format';
import type { PaymentsClient } from '@payments/sdk';
import { loadOptions, USAGE, type DemoOptions } from './demo/options';
import { buildPlan, chargeWithRole, type DemoPlan } from './demo/plan';
import { CallbackReceiver } from './demo/receiver';
import { Reporter, StepFailure, type StepResult } from './demo/report';
import * as steps from './demo/steps';
import { createTenantWithCli, parseTenant, type TenantCredentials } from './demo/tenant';

const print = (line: string) => console.log(line);

async function main(): Promise<number> {
  let options: DemoOptions;
  try {
    options = loadOptions(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    print(USAGE);
    return 0;
  }
  try {
    await runDemo(options);
    return 0;
  } catch (err) {
    const message =
      err instanceof StepFailure ? err.message : `unexpected error: ${err instanceof Error ? err.stack : String(err)}`;
    console.error(`\ndemo FAILED: ${message}`);
    return 1;
  }
}

async function runDemo(options: DemoOptions): Promise<void> {
  print(`Payments integration demo: gateway ${options.gatewayUrl}, bank sandbox ${options.bankSandboxUrl}\n`);
  const report = new Reporter(print);
  await report.step('check the system', () => steps.checkSystem(options));
  const tenant = await report.step('create tenant (admin CLI)', () => obtainTenant(options));
  const api = await report.step('authenticate', () => steps.authenticate(options, tenant));
  const receiver = new CallbackReceiver(tenant.signing_secret);
  try {
    await report.step('start callback receiver', () => startReceiver(receiver, options));
    const plan = buildPlan(receiver.url);
    await runSession(report, api, receiver, plan, options);
  } finally {
    await receiver.stop();
  }
}

async function runSession(
  report: Reporter,
  api: PaymentsClient,
  receiver: CallbackReceiver,
  plan: DemoPlan,
  options: DemoOptions,
): Promise<void> {
  const timeout = options.timeoutMs;
  const toPay = chargeWithRole(plan, 'pay');
  const toCancel = chargeWithRole(plan, 'cancel');
  await report.step('register clients (CPF and CNPJ)', () => steps.registerClients(api, plan));
  await report.step('issue charges (slips and PIX)', () => steps.issueCharges(api, plan));
  const registrations = await report.step('wait for registered callbacks', () =>
    steps.waitForRegistrations(receiver, plan, timeout),
  );
  await report.step('pay the PIX charge at the sandbox', () => steps.payAtSandbox(options, toPay, registrations));
  await report.step('wait for the paid callback', () => steps.waitForPayment(receiver, toPay, timeout));
  await report.step('cancel a slip', () => steps.cancelCharge(api, toCancel));
  await report.step('wait for the cancellation callback', () => steps.waitForCancellation(receiver, toCancel, timeout));
  await report.step('request the booklet (carnê)', () => steps.requestBooklet(api, plan, receiver.url));
  const download = await report.step('wait for the booklet callback', () =>
    steps.waitForBooklet(receiver, plan, timeout),
  );
  const pdfFile = await report.step('download the booklet PDF', () =>
    steps.downloadBooklet(download, plan, options.outputDir),
  );
  const found = await report.step('search all charges', () => steps.searchAll(api, plan));
  await report.step('search approved charges', () => steps.searchApproved(api, plan, toPay));
  await report.step('consult the paid charge', () => steps.consultPaid(api, toPay));
  printSummary({ report, receiver, plan, registrations, found, pdfFile });
}

async function obtainTenant(options: DemoOptions): Promise<StepResult<TenantCredentials>> {
  const name = `Demo ERP ${new Date().toISOString().slice(0, 19).replace('T', ' ')}`;
  const tenant = options.tenantJson
    ? parseTenant(options.tenantJson)
    : await createTenantWithCli(name, Math.max(options.timeoutMs, 30_000));
  const how = options.tenantJson ? 'from DEMO_TENANT_JSON' : 'npm run admin -- tenant create --json';
  return {
    value: tenant,
    facts: `tenant ${tenant.tenant_id} "${tenant.name ?? name}" (${how}; signing secret whsec_...)`,
  };
}

async function startReceiver(receiver: CallbackReceiver, options: DemoOptions): Promise<StepResult<void>> {
  await receiver.start(options.listenHost, options.callbackHost);
  return { value: undefined, facts: `url_callback ${receiver.url} (checks every webhook-signature)` };
}

interface SummaryInput {
  report: Reporter;
  receiver: CallbackReceiver;
  plan: DemoPlan;
  registrations: steps.Registrations;
  found: Map<string, steps.SearchItem>;
  pdfFile: string;
}

function printSummary({ report, receiver, plan, registrations, found, pdfFile }: SummaryInput): void {
  print(
    `\nSummary: ${report.steps} steps passed in ${report.totalMs} ms; ${receiver.callbacks.length} callbacks received, every signature valid (${receiver.duplicates} duplicate deliveries dropped).`,
  );
  for (const charge of plan.charges) {
    const id = charge.payload.account_receivable_id;
    const data = registrations.get(id);
    const kind = charge.payload.payment_method === 1 ? 'slip' : 'PIX ';
    const payWith =
      charge.payload.payment_method === 1 && data?.typeable_line
        ? formatTypeableLine(data.typeable_line)
        : pixPrefix(data?.pix_copy_and_paste ?? '');
    const state = found.get(id)?.status_payment ?? '?';
    print(
      `  ${charge.label.padEnd(21)} ${kind} ${reais(charge.payload.value).padStart(12)}  due ${charge.payload.due_date}  ${state.padEnd(9)}  ${payWith}`,
    );
  }
  print(
    `  Booklet (carnê) of the ${plan.charges.filter((c) => c.role === 'installment').length} installments: ${pdfFile}`,
  );
}

void main().then((code) => process.exit(code));
