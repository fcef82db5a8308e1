import { createServer, connect, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import {
  CancelChargeRequest,
  ChargeList,
  ChargeView,
  CreateChargeRequest,
  CreateChargeResponse,
  ErrorBody,
  InterContractError,
  PdfResponse,
  TokenRequest,
  TokenResponse,
  WebhookBody,
  WebhookRegistration,
  assertInter,
  interViolations,
  seuNumeroFor,
} from '../src';
import * as fixtures from '../src/fixtures';
import { createTestCertificateAuthority } from '../src/test-certificates';

describe('Inter Cobrança v3 contract fixtures', () => {
  it.each([
    ['tokenRequest', TokenRequest, fixtures.tokenRequest],
    ['tokenResponse', TokenResponse, fixtures.tokenResponse],
    ['createChargeRequest', CreateChargeRequest, fixtures.createChargeRequest],
    ['createChargeResponse', CreateChargeResponse, fixtures.createChargeResponse],
    ['chargeIssued', ChargeView, fixtures.chargeIssued],
    ['chargeInProcess', ChargeView, fixtures.chargeInProcess],
    ['chargePaidByPix', ChargeView, fixtures.chargePaidByPix],
    ['chargeCancelled', ChargeView, fixtures.chargeCancelled],
    ['chargeList', ChargeList, fixtures.chargeList],
    ['cancelRequest', CancelChargeRequest, fixtures.cancelRequest],
    ['pdfResponse', PdfResponse, fixtures.pdfResponse],
    ['webhookRegistration', WebhookRegistration, fixtures.webhookRegistration],
    ['webhookPaid', WebhookBody, fixtures.webhookPaid],
    ['errorBody', ErrorBody, fixtures.errorBody],
  ] as const)('%s conforms to its schema', (_name, schema, value) => {
    expect(interViolations(schema, value)).toEqual([]);
  });

  it('requests are closed: an unknown field, a long seuNumero or a bad CEP is named', () => {
    const bad = {
      ...fixtures.createChargeRequest,
      seuNumero: '1234567890123456',
      pagador: { ...fixtures.createChargeRequest.pagador, cep: '30110-012' },
      extra: 1,
    };
    const paths = interViolations(CreateChargeRequest, bad).map((v) => v.path);
    expect(paths).toEqual(expect.arrayContaining(['/seuNumero', '/pagador/cep', '/extra']));
    expect(() => assertInter(CreateChargeRequest, bad, 'create request')).toThrow(InterContractError);
  });

  it('amounts are reais with at most two decimals, float noise aside', () => {
    expect(interViolations(CreateChargeRequest, { ...fixtures.createChargeRequest, valorNominal: 19.99 })).toEqual([]);
    expect(
      interViolations(CreateChargeRequest, { ...fixtures.createChargeRequest, valorNominal: 10.1 + 20.2 }),
    ).toEqual([]);
    // Inter's reference: 2.50 to 99,999,999.99.
    expect(
      interViolations(CreateChargeRequest, { ...fixtures.createChargeRequest, valorNominal: 2.49 }).map((v) => v.path),
    ).toEqual(['/valorNominal']);
    expect(interViolations(CreateChargeRequest, { ...fixtures.createChargeRequest, valorNominal: 2.5 })).toEqual([]);
    expect(
      interViolations(CreateChargeRequest, { ...fixtures.createChargeRequest, valorNominal: 12.345 }).map(
        (v) => v.path,
      ),
    ).toEqual(['/valorNominal']);
  });

  it('an unknown situacao does not conform', () => {
    const view = { ...fixtures.chargeIssued, cobranca: { ...fixtures.chargeIssued.cobranca, situacao: 'PAGO' } };
    expect(interViolations(ChargeView, view).map((v) => v.path)).toEqual(['/cobranca/situacao']);
  });
});

describe('seuNumeroFor', () => {
  it('is 15 digits, the same for the same id in any case, different for another id', () => {
    const id = '0b7e3c1e-8f0a-4d3c-9a51-2f1d7f4c6a10';
    expect(seuNumeroFor(id)).toMatch(/^\d{15}$/);
    expect(seuNumeroFor(id.toUpperCase())).toBe(seuNumeroFor(id));
    expect(seuNumeroFor('0b7e3c1e-8f0a-4d3c-9a51-2f1d7f4c6a11')).not.toBe(seuNumeroFor(id));
  });
});

describe('test certificates', () => {
  const ca = createTestCertificateAuthority('Inter test CA');
  const otherCa = createTestCertificateAuthority('Another CA');
  const server = ca.issue({ commonName: 'localhost', kind: 'server' });

  async function handshake(client: { certPem: string; keyPem: string }): Promise<'ok' | 'refused'> {
    const tlsServer = createServer(
      { cert: server.certPem, key: server.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true },
      (socket) => socket.end('hello'),
    );
    tlsServer.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    const port = (tlsServer.address() as AddressInfo).port;
    try {
      return await new Promise((resolve) => {
        const socket: TLSSocket = connect({
          host: '127.0.0.1',
          port,
          servername: 'localhost',
          ca: ca.certPem,
          cert: client.certPem,
          key: client.keyPem,
        });
        let data = '';
        socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
        socket.on('end', () => resolve(data === 'hello' ? 'ok' : 'refused'));
        socket.on('error', () => resolve('refused'));
      });
    } finally {
      await new Promise((resolve) => tlsServer.close(resolve));
    }
  }

  it('a client certificate of the CA completes mutual TLS; one of another CA is refused', async () => {
    expect(await handshake(ca.issue({ commonName: 'client-1', kind: 'client' }))).toBe('ok');
    expect(await handshake(otherCa.issue({ commonName: 'intruder', kind: 'client' }))).toBe('refused');
  });
});
