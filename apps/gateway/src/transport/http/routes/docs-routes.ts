import { createReadStream } from 'node:fs';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import {
  API_DOCS_PATH,
  buildOpenApiDocument,
  OPENAPI_DOCUMENT_PATH,
  ServiceError,
  type OpenApiDocument,
} from '@payments/contracts';
import type { GatewayContext, GatewayState } from '../context';

const ASSETS_PATH = `${API_DOCS_PATH}/assets`;

/** swagger-ui-dist's files, served from node_modules: the page works offline, with no CDN. */
const SWAGGER_UI_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));

/**
 * The only files /docs/assets serves, by exact name. A fixed list (not a directory mapping) is what
 * makes path traversal impossible: no part of the URL ever becomes part of a file path.
 */
const SWAGGER_UI_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css.map': 'application/json; charset=utf-8',
  'swagger-ui-bundle.js.map': 'application/json; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** Our own start-up script, a file rather than an inline script so a strict CSP can forbid inline code. */
const INIT_SCRIPT_NAME = 'docs-init.js';
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_DOCUMENT_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    layout: 'BaseLayout',
    // No call to the public validator service: the page must work offline.
    validatorUrl: null,
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Payments integration API</title>
  <link rel="stylesheet" href="${ASSETS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${ASSETS_PATH}/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${ASSETS_PATH}/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <noscript>This page needs JavaScript. The OpenAPI document itself is at <a href="${OPENAPI_DOCUMENT_PATH}">${OPENAPI_DOCUMENT_PATH}</a>.</noscript>
  <div id="swagger-ui"></div>
  <script src="${ASSETS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${ASSETS_PATH}/${INIT_SCRIPT_NAME}"></script>
</body>
</html>
`;

/** Swagger UI sets inline styles and shows data: images; everything else comes from this origin. */
const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

/**
 * GET /api/v1/openapi.json (the document, no auth) and GET /docs (Swagger UI rendering it), with the
 * page's assets under /docs/assets/*.
 */
export function mountApiDocs(router: Router<GatewayState>, document: OpenApiDocument = buildOpenApiDocument()): void {
  // Built once: the document only changes with a new release.
  const documentJson = JSON.stringify(document);

  router.get(OPENAPI_DOCUMENT_PATH, (ctx) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('cache-control', 'public, max-age=300');
    ctx.set('access-control-allow-origin', '*'); // public and credential-free: other tools may load it
    ctx.body = documentJson;
  });

  const servePage = (ctx: GatewayContext) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('content-security-policy', PAGE_CSP);
    ctx.set('cache-control', 'no-cache');
    ctx.body = PAGE;
  };
  router.get(API_DOCS_PATH, servePage);
  router.get(`${API_DOCS_PATH}/`, servePage);

  router.get(`${ASSETS_PATH}/:file`, (ctx) => {
    const file = ctx.params.file ?? '';
    ctx.set('x-content-type-options', 'nosniff');
    if (file === INIT_SCRIPT_NAME) {
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.set('cache-control', 'no-cache');
      ctx.body = INIT_SCRIPT;
      return;
    }
    const contentType = Object.hasOwn(SWAGGER_UI_ASSETS, file) ? SWAGGER_UI_ASSETS[file] : undefined;
    if (contentType === undefined) throw new ServiceError('not_found', `no documentation asset ${file}`);
    ctx.type = contentType;
    ctx.set('cache-control', 'public, max-age=3600');
    ctx.body = createReadStream(join(SWAGGER_UI_DIR, file));
  });
}
