# One image for both processes of backupjob-operator; the command chooses which one runs:
#   node dist/apps/watcher/src/main.js   (the Helm chart and docker-compose.yml set this)
#   node dist/apps/worker/src/main.js    (the default)
# Each starts its app's bundle (dist/apps/<app>/bundle/app.cjs) with the code cache the build made.
# Build: docker build -t backupjob-operator:dev .

ARG NODE_VERSION=24.22.3

# Compiles the TypeScript and bundles each app with the full (dev) dependency set, and writes each
# bundle's code cache beside it, under the image's own Node. The caches come from a training run:
# the build starts both apps against the API emulator (over TLS, as against a cluster: openssl makes
# its certificate) and a private redis-server, and lets them make one BackupJob Ready, so that each
# cache holds what a start compiles. Both are installed for that alone; the runtime stage has
# neither. Not as root after the install: nothing else here needs it.
FROM node:${NODE_VERSION}-bookworm-slim AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends openssl redis-server \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
RUN chown node:node /app
USER node
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY --chown=node:node tsconfig.json tsconfig.build.json ./
COPY --chown=node:node scripts/copy-assets.mjs scripts/bundle.mjs scripts/bundle-format.mjs scripts/own-source-map.mjs scripts/
COPY --chown=node:node config/crd config/crd
COPY --chown=node:node config/rbac config/rbac
COPY --chown=node:node tools/code-cache tools/code-cache
COPY --chown=node:node apps apps
COPY --chown=node:node libs libs
RUN npm run build

# Only the production dependencies, installed from the same lockfile (the npm cache stays behind
# in this stage).
FROM node:${NODE_VERSION}-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and not writable by the process: the chart also mounts the root filesystem read-only.
COPY package.json ./
COPY --from=production-dependencies /app/node_modules ./node_modules
# dist/package.json, written by the build, maps the #names the compiled files import (#queue, …) to
# the files beside them.
COPY --from=build /app/dist ./dist
# The image's unprivileged "node" user, by number so that Kubernetes can verify runAsNonRoot.
USER 1000:1000
# METRICS_PORT (/metrics) and HEALTH_PORT (/healthz, /readyz).
EXPOSE 8080 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HEALTH_PORT || 8081}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/apps/worker/src/main.js"]
