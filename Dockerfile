# One image for every app of the monorepo; docker-compose.yml picks the app with APP_ENTRY.
FROM node:20-bookworm-slim
WORKDIR /srv
COPY package.json package-lock.json .npmrc ./
COPY apps ./apps
COPY libs ./libs
COPY e2e/package.json ./e2e/package.json
COPY scripts ./scripts
COPY tsconfig.base.json ./
RUN npm install --loglevel=warn
ENV NODE_ENV=production
CMD ["sh", "-c", "exec node --import tsx \"$APP_ENTRY\""]
