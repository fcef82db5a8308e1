import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as an app exported it (OTLP/JSON), flattened with its service's name. */
export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  statusCode?: number;
}

export const OtlpKind = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        status?: { code?: number };
      }>;
    }>;
  }>;
}

/**
 * The smallest OpenTelemetry collector: accepts OTLP/HTTP JSON on POST /v1/traces (what the apps'
 * exporter sends when OTEL_EXPORTER_OTLP_ENDPOINT points here) and keeps every span in memory.
 */
export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** Every export request as received (OTLP/JSON text): events, status messages and resources included. */
  readonly bodies: string[] = [];
  private server!: Server;
  endpoint = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void readBody(req).then(
        (body) => {
          if (req.method !== 'POST' || req.url !== '/v1/traces') {
            res.writeHead(404).end();
            return;
          }
          this.bodies.push(body.toString('utf8'));
          this.spans.push(...flatten(JSON.parse(body.toString('utf8')) as ExportRequest));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        },
        () => res.writeHead(400).end(),
      );
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.endpoint = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  trace(traceId: string): CollectedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

function flatten(request: ExportRequest): CollectedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const service = String(attributes(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        service,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId || undefined,
        name: s.name,
        kind: s.kind,
        attributes: attributes(s.attributes),
        statusCode: s.status?.code,
      })),
    );
  });
}

function attributes(list: KeyValue[] = []): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (v !== undefined) out[key] = typeof v === 'string' && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}
