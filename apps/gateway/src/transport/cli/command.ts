import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import type { RunMode } from '@payments/config';
import type { GatewayDatabase } from '../../db/schema';
import type { AuditedBy } from '../../domain/tenancy/admin-audit';
import { UsageError } from './secret-files';

/** The command line's flags, as parseArgs gives them. */
export interface Options {
  name?: string;
  /** operator invite: the e-mail the person signs in with. */
  email?: string;
  tenant?: string;
  operator?: string;
  'overlap-hours'?: string;
  limit?: string;
  json: boolean;
  help?: boolean;
  provider?: string;
  'beneficiary-name'?: string;
  'beneficiary-tax-id'?: string;
  'beneficiary-city'?: string;
  'pix-key'?: string;
  agency?: string;
  account?: string;
  'client-id'?: string;
  'client-secret-file'?: string;
  'cert-file'?: string;
  'key-file'?: string;
  'base-url'?: string;
  'pix-api-url'?: string;
  'token-url'?: string;
  'replace-webhook'?: boolean;
}

/** The flags that set a provider account (besides --tenant and --json): any of them means "set", none "show". */
export const ACCOUNT_FLAGS = [
  'provider',
  'beneficiary-name',
  'beneficiary-tax-id',
  'beneficiary-city',
  'pix-key',
  'agency',
  'account',
  'client-id',
  'client-secret-file',
  'cert-file',
  'key-file',
  'base-url',
  'pix-api-url',
  'token-url',
] as const;

/** What a command is given: the database, the flags, and how to print and whom to audit. */
export interface Command {
  db: Kysely<GatewayDatabase>;
  /** NODE_ENV's mode: what a new tenant gets, and whether a development credentials key will do. */
  mode: RunMode;
  options: Options;
  /** The positional argument after the action, if any. */
  target: string | undefined;
  /** Who runs a command that changes something (the audit); asked for only by those commands. */
  operator: () => AuditedBy;
  /** The bus, connected on first use (only the jobs commands need it). */
  bus: () => Promise<Bus>;
  /** Prints the human text, or the data as one JSON line with --json. */
  print: (human: string, data: unknown) => void;
}

/** Each command by `<resource> <action>`; it prints what it did or throws an AdminError for the operator. */
export type Commands = [key: string, run: (command: Command) => Promise<void>][];

/** --limit: a whole number from 1 to 999999, or none. */
export function auditLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,5}$/.test(value)) throw new UsageError('--limit must be a whole number from 1 to 999999');
  return Number(value);
}
