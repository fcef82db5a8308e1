# One image per app, chosen by the APP build argument:
#   docker build --build-arg APP=gateway -t payments/gateway .
# APP is one of gateway, bank-sandbox, receivables-svc, clients-svc, callback-svc, booklet-svc, console;
# docker-compose.yml builds all seven. The build stage runs `npm run build` (Nx + esbuild: each app's
# dist/apps/<app>/main.js bundles our own code and the @payments/* libraries, npm packages stay
# external); the runtime stage holds one app's build output and only that app's production
# dependencies, and runs `node dist/apps/<app>/main.js` as the unprivileged user node. Built, an app
# is ready in about half the time it takes through tsx and holds 60-90 MB less memory (Node 24).
ARG NODE_IMAGE=node:24-bookworm-slim

# The package manifests alone (root lockfile and every workspace's package.json): the install layers
# below are rebuilt when one of them changes, not when source code does.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /srv
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json -delete \
 && find . -depth -mindepth 1 -type d -empty -delete

# Every dependency (Nx and esbuild are dev dependencies), then the build of every app. The build
# does not depend on APP, so the six images share this stage.
# `npm install`, which installs the locked versions: `npm ci` refuses a lockfile that lacks another
# platform's optional binaries, as the registry we use can leave it (package.json pins @swc/core and
# unrs-resolver to releases whose every platform binary it has).
FROM ${NODE_IMAGE} AS build
WORKDIR /srv
ENV NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
COPY --from=manifests /srv ./
RUN npm install --no-audit --no-fund --loglevel=warn
COPY . .
RUN npm run build --loglevel=warn

# This app's production dependencies only: npm packages are external to the bundle, and some read
# their own files at run time (pdfkit's fonts, swagger-ui-dist, bwip-js). The @payments/* links npm
# makes would point at sources this image does not have; the bundle needs none of them.
FROM ${NODE_IMAGE} AS prod-deps
ARG APP
WORKDIR /srv
COPY --from=manifests /srv ./
RUN case "$APP" in gateway|bank-sandbox|receivables-svc|clients-svc|callback-svc|booklet-svc|console) ;; \
      *) echo "build argument APP must be gateway, bank-sandbox, receivables-svc, clients-svc, callback-svc, booklet-svc or console (got '$APP')" >&2; exit 1 ;; \
    esac \
 && npm install --omit=dev --workspace "apps/$APP" --no-audit --no-fund --loglevel=warn \
 && rm -rf node_modules/@payments

FROM ${NODE_IMAGE} AS runtime
ARG APP
ENV NODE_ENV=production APP=${APP}
WORKDIR /srv
COPY --from=prod-deps /srv/node_modules ./node_modules
COPY --from=build /srv/dist/apps/${APP} ./dist/apps/${APP}
# `npm run migrate` (every schema, once per release, before the apps) runs from the gateway image:
# a deploy's migrate Job uses it. It needs no package the gateway does not (kysely, pg).
COPY --from=build /srv/dist/scripts ./dist/scripts
# Every npm package the bundle requires (esbuild's meta.json lists them) must resolve here: one that
# npm placed under a workspace folder, or that no package.json declares, would otherwise fail at start.
RUN node -e "const path = require('path'); const dir = path.resolve('dist/apps', process.env.APP); \
  const meta = require(path.join(dir, 'meta.json')); const req = require('module').createRequire(path.join(dir, 'main.js')); \
  const wanted = [...new Set(Object.values(meta.outputs).flatMap((o) => o.imports).filter((i) => i.external && !i.path.startsWith('node:')).map((i) => i.path))]; \
  const missing = wanted.filter((name) => { try { req.resolve(name); return false; } catch { return true; } }); \
  if (missing.length) { console.error('not installed for ' + process.env.APP + ': ' + missing.join(', ')); process.exit(1); }"
# An .npmrc with loglevel=silent and a package.json whose `npm run admin -- ...` runs the built admin
# CLI in the gateway image: nothing is installed there, so npm's banner is all the level would show,
# and `docker compose exec gateway npm run admin -- tenant create --name X --json` prints only the JSON.
RUN echo 'loglevel=silent' > .npmrc
RUN node -e "const app = process.env.APP; \
  const elsewhere = (what) => 'echo \"' + what + ' is in the gateway image: docker compose exec gateway npm run ...\" >&2; exit 2'; \
  const admin = app === 'gateway' ? 'node dist/apps/gateway/transport/cli/cli.js' : elsewhere('the admin CLI'); \
  const migrate = app === 'gateway' ? 'node dist/scripts/migrate.js' : elsewhere('npm run migrate'); \
  require('fs').writeFileSync('package.json', JSON.stringify({ name: 'payments-' + app, private: true, scripts: { admin, migrate } }, null, 2) + '\n');"
# Files stay root's and read-only to the app.
USER node
# Ready when GET /readyz on the app's own port answers 2xx (the image has no curl: Node's fetch).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const [name, port] = { gateway: ['PORT', 3000], 'bank-sandbox': ['BANK_SANDBOX_PORT', 3100], 'receivables-svc': ['RECEIVABLES_PORT', 3200], 'clients-svc': ['CLIENTS_PORT', 3300], 'callback-svc': ['CALLBACK_PORT', 3400], 'booklet-svc': ['BOOKLET_PORT', 3500], console: ['CONSOLE_PORT', 3700] }[process.env.APP]; fetch('http://127.0.0.1:' + (process.env[name] || port) + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# exec: node becomes PID 1 and receives SIGTERM itself (graceful drain on `docker stop`).
CMD ["sh", "-c", "exec node dist/apps/$APP/main.js"]
