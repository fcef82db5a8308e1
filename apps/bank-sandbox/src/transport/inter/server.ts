import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Kysely } from 'kysely';
import { closeServer, keepConnectionsAlive, listen } from '@payments/lifecycle';
import { loadCertificateAuthority, type CertificateAuthority } from '@payments/dev-certificates';
import type { Logger } from '@payments/logger';
import type { BankSandboxDatabase } from '../../db/schema';
import type { Behaviour } from '../../domain/behaviour';
import { isPixPath } from '../pix/api-app';
import { createPixApi } from '../pix/pix-api';
import type { PixTables } from '../../db/pix';
import { createInterApiApp } from './api-app';
import { CallMeter } from '../../domain/inter/call-meter';
import type { InterSandboxConfig, InterTlsFiles } from '../../inter-config';
import { withInterControls } from './controls';
import type { InterTables } from '../../db/inter';
import { ensureDevInterTls } from './dev-tls';
import { InterBank } from '../../domain/inter/inter-bank';
import { interNoticeDialect, NoticeSender } from './notice-sender';
import type { SandboxBank } from '../../domain/inter/terms';

export interface InterDialectDeps {
  config: InterSandboxConfig;
  db: Kysely<BankSandboxDatabase>;
  bank: SandboxBank;
  behaviour: Behaviour;
  slowMs: number;
  /** host[:port] of the sandbox's main port (where the PIX locations are served), once it listens. */
  mainHost: () => string;
  logger: Logger;
}

export interface RunningInterDialect {
  port: number;
  /** The API root an Inter provider account points at: https://127.0.0.1:<port>/inter */
  baseUrl: string;
  /** The CA that its server and integration certificates chain to (what a client trusts). */
  caFile: string;
  /**
   * Puts the Inter and PIX controls (/sandbox/inter/**, /sandbox/pix/**, pay by codigoSolicitacao,
   * nossoNumero or txid, the PIX locations) in front of the sandbox's own handler.
   */
  wrap(main: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void;
  stop(): Promise<void>;
}

/** The TLS files in force: the given ones, or the development CA's (made on the first start). */
function tlsFiles(config: InterSandboxConfig): InterTlsFiles {
  if (config.tls) return config.tls;
  if (config.devCaDir) return ensureDevInterTls(config.devCaDir);
  throw new Error('the Inter dialect needs BANK_SANDBOX_INTER_TLS_* files (or NODE_ENV=development)');
}

/**
 * Starts the Inter Cobrança v3 dialect: an HTTPS listener that requires a client certificate signed by
 * its CA (mutual TLS as at Inter), and the clock and sender of its notices.
 */
export async function startInterDialect(deps: InterDialectDeps): Promise<RunningInterDialect> {
  const files = tlsFiles(deps.config);
  const [cert, key, ca, caKey] = await Promise.all([
    readFile(files.certFile, 'utf8'),
    readFile(files.keyFile, 'utf8'),
    readFile(files.caFile, 'utf8'),
    files.caKeyFile ? readFile(files.caKeyFile, 'utf8') : Promise.resolve(null),
  ]);
  const authority: CertificateAuthority | null = caKey ? loadCertificateAuthority(ca, caKey) : null;
  const db = deps.db.withTables<InterTables>();
  // NoticeSender is typed over both dialects' queues (the PIX API's sender is the same class).
  const pixDb = deps.db.withTables<InterTables & PixTables>();
  const bank = new InterBank(db, deps.bank, deps.config.issueDelayMs);
  const meter = new CallMeter();
  const sender = new NoticeSender(
    pixDb,
    interNoticeDialect(bank),
    { retryMs: deps.config.noticeRetryMs, timeoutMs: deps.config.noticeTimeoutMs, pollMs: deps.config.pollMs },
    deps.logger,
    { certPem: cert, keyPem: key },
  );
  bank.onNotice = () => sender.wake();
  const app = createInterApiApp({
    bank,
    behaviour: deps.behaviour,
    slowMs: deps.slowMs,
    meter,
    enforceLimits: deps.config.enforceLimits,
    httpWebhooks: deps.config.httpWebhooks,
    logger: deps.logger,
  });
  // The PIX API (both of its dialects) shares the listener, the integrations, the faults and the meter.
  const pix = createPixApi({
    db: pixDb,
    inter: bank,
    bank: deps.bank,
    behaviour: deps.behaviour,
    slowMs: deps.slowMs,
    meter,
    config: deps.config,
    identity: { certPem: cert, keyPem: key },
    locationHost: deps.mainHost,
    logger: deps.logger,
  });
  const interHandler = app.callback();
  const server = keepConnectionsAlive(
    createServer({ cert, key, ca, requestCert: true, rejectUnauthorized: true }, (req, res) =>
      isPixPath((req.url ?? '/').split('?')[0]) ? pix.handler(req, res) : void interHandler(req, res),
    ),
  );
  // A refused handshake (no or a foreign client certificate) is the client's problem, not an error of ours.
  server.on('tlsClientError', (err) => deps.logger.debug({ err: err.message }, 'inter tls handshake refused'));
  const port = await listen(server, deps.config.port);
  sender.start();
  pix.start();
  const baseUrl = `https://127.0.0.1:${port}/inter`;
  deps.logger.info({ port, baseUrl, caFile: files.caFile }, 'bank-sandbox inter dialect ready');
  return {
    port,
    baseUrl,
    caFile: files.caFile,
    wrap: (main) =>
      withInterControls(main, {
        db,
        bank,
        meter,
        ca: authority,
        logger: deps.logger,
        pix: pix.controls(`https://127.0.0.1:${port}`, authority),
      }),
    async stop() {
      await closeServer(server);
      await sender.stop();
      await pix.stop();
    },
  };
}
