import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import {
  API_DOCS_PATH,
  API_OPERATIONS,
  createAjv,
  OPENAPI_DOCUMENT_PATH,
  type JsonObject,
  type JsonValue,
  type OpenApiDocument,
  type OperationId,
  type OperationObject,
  type ParameterObject,
  type ReferenceObject,
} from '@payments/contracts';
import { createMigratedTestDatabase } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import { createLogger } from '@payments/logger';
import { loadGatewayConfig } from '../src/config';
import { removeBus } from '@payments/test-support/bus-provision';
import { provisionFromEnv as provisionBusFor } from '../src/transport/bus/bus-provision';
import { startGateway, type RunningGateway } from '../src/server';

/*
 * The API documentation against the real gateway: the OpenAPI document lists exactly the routes the
 * router serves, every example in it validates against its schema, it hangs together as OpenAPI 3.1,
 * and the /docs page loads with its assets from this server alone.
 */

let gateway: RunningGateway;
let prefix: string;
let dropDatabase: () => Promise<void>;
let doc: OpenApiDocument;
let docJson: JsonObject;

beforeAll(async () => {
  // Migrated as npm run migrate does; the gateway logs in as its role.
  const database = await createMigratedTestDatabase(SCHEMA, migrations);
  dropDatabase = database.drop;
  const env = {
    DATABASE_URL: database.url,
    BUS_PREFIX: `t${randomBytes(5).toString('hex')}`,
    PORT: '0',
    LOG_LEVEL: 'silent',
    BUS_TIMEOUT_MS: '2000',
  };
  prefix = env.BUS_PREFIX;
  await provisionBusFor(env);
  gateway = await startGateway(loadGatewayConfig(env), createLogger('gateway', 'silent'));
  const res = await fetch(gateway.url + OPENAPI_DOCUMENT_PATH);
  docJson = (await res.json()) as JsonObject;
  doc = docJson as unknown as OpenApiDocument;
});

afterAll(async () => {
  await gateway?.stop();
  await removeBus(prefix);
  await dropDatabase?.();
});

/* Helpers ----------------------------------------------------------------------------------------- */

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isRef = (value: unknown): value is ReferenceObject =>
  typeof value === 'object' && value !== null && typeof (value as ReferenceObject).$ref === 'string';

/** Routes that are operations, not infrastructure: probes, metrics and the documentation itself. */
const isInfrastructure = (path: string) =>
  ['/healthz', '/readyz', '/metrics', OPENAPI_DOCUMENT_PATH].includes(path) ||
  path === API_DOCS_PATH ||
  path.startsWith(`${API_DOCS_PATH}/`);

/** `/clients/:uuid` (router syntax) -> `/clients/{uuid}` (OpenAPI syntax). */
const toTemplate = (path: string) => path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

function operations(): Array<{ method: string; path: string; operation: OperationObject }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = (item as Record<string, OperationObject | undefined>)[method];
      return operation ? [{ method, path, operation }] : [];
    }),
  );
}

/** RFC 6901 escaping of one pointer segment. */
const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

function resolvePointer(root: JsonValue, ref: string): JsonValue | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: JsonValue | undefined = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isObject(node)) node = Object.prototype.hasOwnProperty.call(node, segment) ? node[segment] : undefined;
    else return undefined;
  }
  return node;
}

/** Every node of the document with its JSON pointer. */
function* walk(node: JsonValue, pointer = '#'): Generator<{ node: JsonValue; pointer: string }> {
  yield { node, pointer };
  if (Array.isArray(node)) for (const [i, item] of node.entries()) yield* walk(item, `${pointer}/${i}`);
  else if (isObject(node))
    for (const [key, value] of Object.entries(node)) yield* walk(value, `${pointer}/${escapePointer(key)}`);
}

/** JSON pointers present in `before` and missing from `after` (what ajv's removeAdditional stripped). */
function removedPaths(before: JsonValue, after: JsonValue | undefined, at = ''): string[] {
  if (Array.isArray(before))
    return before.flatMap((item, i) => removedPaths(item, Array.isArray(after) ? after[i] : undefined, `${at}/${i}`));
  if (!isObject(before)) return [];
  return Object.entries(before).flatMap(([key, value]) =>
    isObject(after) && Object.prototype.hasOwnProperty.call(after, key)
      ? removedPaths(value, after[key], `${at}/${key}`)
      : [`${at}/${key}`],
  );
}

interface ExampleCheck {
  /** Where the example is, for the failure message. */
  where: string;
  /** Pointer to the schema it must satisfy. */
  schemaPointer: string;
  value: JsonValue;
}

/**
 * Every example of the document with the schema it belongs to: media types (request bodies, responses,
 * webhooks), parameters and headers all hold `schema` beside `example` or `examples`. An example may be
 * a `$ref` into components/examples; it is then checked against the schema of the place using it.
 */
function exampleChecks(): ExampleCheck[] {
  const checks: ExampleCheck[] = [];
  for (const { node, pointer } of walk(docJson)) {
    if (!isObject(node) || !isObject(node.schema)) continue;
    const schemaPointer = `${pointer}/schema`;
    if ('example' in node) checks.push({ where: `${pointer}/example`, schemaPointer, value: node.example });
    if (isObject(node.examples)) {
      for (const [name, entry] of Object.entries(node.examples)) {
        const example = isRef(entry) ? resolvePointer(docJson, entry.$ref) : entry;
        if (!isObject(example) || !('value' in example)) throw new Error(`${pointer}/examples/${name} has no value`);
        checks.push({ where: `${pointer}/examples/${name}`, schemaPointer, value: example.value });
      }
    }
  }
  return checks;
}

/** A raw GET whose path is sent exactly as written (fetch would normalise `..` away). */
function rawGet(url: string, path: string): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + path, { method: 'GET', path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/* Tests ------------------------------------------------------------------------------------------- */

describe('GET /api/v1/openapi.json', () => {
  it('serves the document without authentication, as JSON', async () => {
    const res = await fetch(gateway.url + OPENAPI_DOCUMENT_PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(((await res.json()) as { openapi: string }).openapi).toMatch(/^3\.1\.\d+$/);
  });
});

describe('the document and the routes the gateway serves', () => {
  it('lists every operation route the router serves, and nothing it does not serve', () => {
    const served = gateway.routes
      .filter((route) => !isInfrastructure(route.path))
      .map((route) => `${route.method} ${toTemplate(route.path)}`)
      .sort();
    const documented = operations()
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .sort();
    expect(served.length).toBeGreaterThanOrEqual(13);
    expect(documented).toEqual(served);
  });

  it('mounts an operation only by its id in the document, whose type names every operation', () => {
    const mounted: OperationId = 'cancelReceivable';
    // @ts-expect-error an operation the document does not list cannot be named, so it cannot be mounted
    const unknown: OperationId = 'deleteEverything';
    expect([mounted, unknown].map((id) => API_OPERATIONS.some((o) => o.operationId === id))).toEqual([true, false]);
  });

  it('the infrastructure routes it leaves out are really infrastructure', () => {
    const left = gateway.routes.filter((route) => isInfrastructure(route.path)).map((route) => route.path);
    expect(left).toEqual(expect.arrayContaining([OPENAPI_DOCUMENT_PATH, API_DOCS_PATH, '/healthz']));
  });

  it('every documented operation is answered by a route (no 404/405), with problem+json and X-Request-Id', async () => {
    for (const { method, path, operation } of operations()) {
      const params = (operation.parameters ?? []).filter((p): p is ParameterObject => !isRef(p));
      let url = path;
      for (const p of params.filter((p) => p.in === 'path'))
        url = url.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
      const query = new URLSearchParams(
        params.filter((p) => p.in === 'query' && p.required).map((p): [string, string] => [p.name, String(p.example)]),
      );
      const target = `${gateway.url}${url}${query.size > 0 ? `?${query}` : ''}`;
      // No credentials: each route must refuse in its own way (401, or 403 for a link with a wrong signature).
      const res = await fetch(target, { method: method.toUpperCase() });
      const outcome = `${method.toUpperCase()} ${path} -> ${res.status}`;
      expect([outcome, res.status !== 404 && res.status !== 405]).toEqual([outcome, true]);
      expect(Object.keys(operation.responses)).toContain(String(res.status));
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
  });
});

describe('examples', () => {
  it('every JSON request body and success response has an example', () => {
    const missing: string[] = [];
    for (const { method, path, operation } of [
      ...operations(),
      ...Object.entries(doc.webhooks).map(([name, item]) => ({ method: 'post', path: name, operation: item.post! })),
    ]) {
      const media = [
        ...Object.entries(operation.requestBody?.content ?? {}).map(([type, m]) => ({
          where: `${method} ${path} request ${type}`,
          type,
          m,
        })),
        ...Object.entries(operation.responses)
          .filter(([status]) => /^2/.test(status))
          .flatMap(([status, response]) =>
            isRef(response)
              ? []
              : Object.entries(response.content ?? {}).map(([type, m]) => ({
                  where: `${method} ${path} ${status} ${type}`,
                  type,
                  m,
                })),
          ),
      ];
      for (const { where, type, m } of media)
        if (type.endsWith('json') && Object.keys(m.examples ?? {}).length === 0) missing.push(where);
    }
    expect(missing).toEqual([]);
  });

  it('every example validates against its schema (contracts ajv), and carries no field the schema does not know', () => {
    const ajv = createAjv();
    const id = 'openapi.json';
    ajv.addSchema(docJson, id);
    const checks = exampleChecks();
    expect(checks.length).toBeGreaterThan(60);
    const failures: string[] = [];
    for (const check of checks) {
      const validate = ajv.compile({ $ref: `${id}${check.schemaPointer}` });
      // The contracts' ajv removes unknown fields as it validates: check a copy, then see what went.
      const copy = structuredClone(check.value);
      if (!validate(copy)) failures.push(`${check.where}: ${ajv.errorsText(validate.errors)}`);
      const removed = removedPaths(check.value, copy);
      if (removed.length > 0) failures.push(`${check.where}: fields unknown to the schema: ${removed.join(', ')}`);
    }
    expect(failures).toEqual([]);
  });

  it('every example of the webhooks and of components/examples is used', () => {
    const refs = new Set(
      [...walk(docJson)].map(({ node }) => (isObject(node) && typeof node.$ref === 'string' ? node.$ref : '')),
    );
    const unused = Object.keys(doc.components.examples).filter((name) => !refs.has(`#/components/examples/${name}`));
    expect(unused).toEqual([]);
    expect(Object.keys(doc.webhooks).length).toBeGreaterThanOrEqual(7);
  });
});

describe('OpenAPI 3.1 structure', () => {
  it('has the required top-level fields', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\//);
  });

  it('every $ref resolves inside the document', () => {
    const broken = [...walk(docJson)].flatMap(({ node, pointer }) =>
      isObject(node) && typeof node.$ref === 'string' && resolvePointer(docJson, node.$ref) === undefined
        ? [`${pointer}: ${node.$ref}`]
        : [],
    );
    expect(broken).toEqual([]);
  });

  it('keeps no TypeBox $id (it would change the base URI of nested $refs)', () => {
    const ids = [...walk(docJson)].filter(({ node }) => isObject(node) && '$id' in node).map(({ pointer }) => pointer);
    expect(ids).toEqual([]);
  });

  it('operations: unique operationIds, responses, declared tags and security schemes, path parameters matching the template', () => {
    const all = [
      ...operations(),
      ...Object.entries(doc.webhooks).map(([name, item]) => ({ method: 'post', path: name, operation: item.post! })),
    ];
    const ids = all.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set(doc.tags.map((t) => t.name));
    const schemes = new Set(Object.keys(doc.components.securitySchemes));
    for (const { method, path, operation } of all) {
      const label = `${method} ${path}`;
      expect([label, Object.keys(operation.responses).length > 0]).toEqual([label, true]);
      for (const tag of operation.tags) expect([label, tags.has(tag)]).toEqual([label, true]);
      for (const requirement of operation.security ?? doc.security)
        for (const name of Object.keys(requirement)) expect([label, schemes.has(name)]).toEqual([label, true]);
      for (const status of Object.keys(operation.responses))
        expect([label, status]).toEqual([label, expect.stringMatching(/^([1-5]\d\d|[1-5]XX|default)$/)]);
      if (doc.webhooks[path]) continue;
      const resolved = (operation.parameters ?? []).map((p) =>
        isRef(p) ? (resolvePointer(docJson, p.$ref) as unknown as ParameterObject) : p,
      );
      const inPath = resolved.filter((p) => p.in === 'path');
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      expect([label, inPath.map((p) => p.name).sort()]).toEqual([label, templated.sort()]);
      for (const p of inPath) expect([label, p.name, p.required]).toEqual([label, p.name, true]);
    }
  });

  it('describes the authentication of each route as the gateway applies it', () => {
    const byId = new Map(operations().map(({ operation }) => [operation.operationId, operation]));
    expect(byId.get('authenticate')?.security).toEqual([{ integrationToken: [] }]);
    expect(byId.get('downloadBooklet')?.security).toEqual([]);
    expect(byId.get('createReceivables')?.security).toEqual([{ accessToken: [] }]);
    expect(doc.components.securitySchemes.accessToken).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
  });
});

describe('GET /docs', () => {
  it('answers an HTML page whose assets all load from this server with the right content types', async () => {
    const page = await fetch(gateway.url + API_DOCS_PATH);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('id="swagger-ui"');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((url) => url.startsWith('/'));
    expect(assets).toEqual(
      expect.arrayContaining([
        `${API_DOCS_PATH}/assets/swagger-ui.css`,
        `${API_DOCS_PATH}/assets/swagger-ui-bundle.js`,
        `${API_DOCS_PATH}/assets/docs-init.js`,
      ]),
    );
    // Nothing from another origin: the page must work offline.
    expect([...html.matchAll(/(?:src|href)="(https?:[^"]+)"/g)]).toEqual([]);

    const expectedType = (url: string) =>
      url.endsWith('.css')
        ? /^text\/css/
        : url.endsWith('.js')
          ? /^text\/javascript/
          : url.endsWith('.png')
            ? /^image\/png/
            : /^application\/json/;
    for (const url of assets.filter((u) => u.startsWith(`${API_DOCS_PATH}/assets/`))) {
      const res = await fetch(gateway.url + url);
      const body = Buffer.from(await res.arrayBuffer());
      expect([url, res.status]).toEqual([url, 200]);
      expect([url, res.headers.get('content-type')]).toEqual([url, expect.stringMatching(expectedType(url))]);
      expect([url, body.length > 0]).toEqual([url, true]);
    }
    const init = await (await fetch(`${gateway.url}${API_DOCS_PATH}/assets/docs-init.js`)).text();
    expect(init).toContain(OPENAPI_DOCUMENT_PATH);
    const bundle = await fetch(`${gateway.url}${API_DOCS_PATH}/assets/swagger-ui-bundle.js`);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });

  it('serves the page at /docs/ too', async () => {
    const res = await fetch(`${gateway.url}${API_DOCS_PATH}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it.each([
    ['an unknown asset', '/docs/assets/nothing-here.js'],
    ['a file of the package that is not an asset', '/docs/assets/package.json'],
    ["the package's own demo initializer", '/docs/assets/swagger-initializer.js'],
    ['a traversal with ..', '/docs/assets/../../../package.json'],
    ['a traversal with an encoded slash', '/docs/assets/..%2F..%2F..%2Fpackage.json'],
    ['a traversal with encoded dots', '/docs/assets/%2e%2e%2f%2e%2e%2fpackage.json'],
    ['a nested path', '/docs/assets/sub/swagger-ui.css'],
    ['an absolute path', '/docs/assets/%2Fetc%2Fpasswd'],
  ])('answers 404 for %s', async (_label, path) => {
    const res = await rawGet(gateway.url, path);
    expect(res.status).toBe(404);
    expect(res.contentType).toMatch(/^application\/problem\+json/);
    expect(res.body).not.toContain('"workspaces"');
    expect(res.body).not.toContain('root:');
  });
});
