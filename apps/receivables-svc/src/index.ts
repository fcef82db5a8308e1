export { startReceivablesService, type RunningReceivablesService } from './service';
export { loadReceivablesConfig, type ReceivablesConfig } from './config';
export { INTAKE_COLUMNS } from './domain/intake';
export { sweepLeaseMs } from './domain/reconciliation';
