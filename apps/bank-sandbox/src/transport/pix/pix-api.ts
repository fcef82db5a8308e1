import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CertificateAuthority } from '@payments/dev-certificates';
import type { Logger } from '@payments/logger';
import type { Behaviour } from '../../domain/behaviour';
import type { CallMeter } from '../../domain/inter/call-meter';
import type { InterSandboxConfig } from '../../inter-config';
import type { InterBank } from '../../domain/inter/inter-bank';
import { NoticeSender, type SenderIdentity } from '../inter/notice-sender';
import type { SandboxBank } from '../../domain/inter/terms';
import { createPixApiApp } from './api-app';
import { createPixControls, type PixControls } from './controls';
import type { PixDb } from '../../db/pix';
import { PixBank } from '../../domain/pix/pix-bank';

export interface PixApiStartDeps {
  db: PixDb;
  inter: InterBank;
  bank: SandboxBank;
  behaviour: Behaviour;
  slowMs: number;
  meter: CallMeter;
  config: InterSandboxConfig;
  identity: SenderIdentity;
  /** host[:port] of the sandbox's main port, where the cobvs' locations are served (asked when a cobv is created). */
  locationHost: () => string;
  logger: Logger;
}

export interface PixApi {
  /** The handler of the PIX API's paths on the mutual TLS port (see isPixPath). */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** The controls on the main port, once the TLS port is known. */
  controls(tlsRoot: string, ca: CertificateAuthority | null): PixControls;
  start(): void;
  stop(): Promise<void>;
}

/**
 * The PIX API of the bank sandbox, beside its Inter dialect and on its integrations, faults and call
 * meter: both dialects' routes, the ledger, and the clock and postman of its notices.
 */
export function createPixApi(deps: PixApiStartDeps): PixApi {
  const pix = new PixBank(deps.db, deps.bank, deps.inter.faults, deps.locationHost);
  // The PIX API's clock removes the cobvs past their validity; its notices (`{ pix: [...] }`) go to
  // `<webhookUrl>/pix` over mutual TLS (as the standard's webhooks are called), on Inter's retry schedule.
  const sender = new NoticeSender(
    deps.db,
    { name: 'pix', table: 'pix_notifications', tick: () => pix.tick() },
    { retryMs: deps.config.noticeRetryMs, timeoutMs: deps.config.noticeTimeoutMs, pollMs: deps.config.pollMs },
    deps.logger,
    deps.identity,
  );
  pix.onNotice = () => sender.wake();
  const app = createPixApiApp({
    pix,
    inter: deps.inter,
    bank: deps.bank,
    behaviour: deps.behaviour,
    slowMs: deps.slowMs,
    meter: deps.meter,
    enforceLimits: deps.config.enforceLimits,
    httpWebhooks: deps.config.httpWebhooks,
    logger: deps.logger,
  });
  const handler = app.callback();
  return {
    handler: (req, res) => void handler(req, res),
    controls: (tlsRoot, ca) =>
      createPixControls({ pix, inter: deps.inter, bank: deps.bank, ca, tlsRoot, logger: deps.logger }),
    start: () => sender.start(),
    stop: () => sender.stop(),
  };
}
