# syntax=docker/dockerfile:1.7
#
# One multi-stage build for every deployable of the platform. Pick the deployable with
# --target (search-gateway, account-admin, billing, provider-sim); the ledger worker runs
# the billing image with `node services/billing/dist/worker.js`.
#
#   docker build --target search-gateway -t svc/search-gateway:local .
#
# `npm install` rather than `npm ci`: the lockfile lacks some non-Linux optional builds,
# which `npm ci` refuses (docs/development.md, "Toolchain"); `npm install` still honours the lockfile.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: full install, generate the Prisma clients, compile, then prune ----------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NODE_ENV=development \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
COPY . .
# postinstall runs `generate:prisma` in every workspace that has a schema.
RUN --mount=type=cache,target=/root/.npm npm install
RUN npm run build
# Keep only production dependencies (workspace links stay), and drop what a running
# service never reads.
RUN npm prune --omit=dev --ignore-scripts \
 && rm -rf test coverage docs scripts proto \
 && find . -path ./node_modules -prune -o -name '*.tsbuildinfo' -print | xargs rm -f

# ---- runtime: the compiled code and production dependencies, owned by root ------------
FROM ${NODE_IMAGE} AS runtime
# tini forwards SIGTERM to node and reaps zombies (node is not meant to be PID 1).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages ./packages
COPY --from=build /app/services ./services
COPY --from=build /app/tools ./tools
COPY deploy/docker/healthcheck.mjs ./deploy/docker/healthcheck.mjs
# The files stay root-owned and read-only for the service user; the root filesystem can
# be mounted read-only (only /tmp needs to be writable).
# 1000 is the `node` user of the base image; numeric so Kubernetes can verify runAsNonRoot.
USER 1000:1000
ENTRYPOINT ["/usr/bin/tini", "--"]

# ---- one target per deployable ----------------------------------------------------------
FROM runtime AS provider-sim
ENV PORT=9090
EXPOSE 9090
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD ["node", "deploy/docker/healthcheck.mjs", "9090", "/healthz"]
CMD ["node", "tools/provider-sim/dist/main.js"]

FROM runtime AS account-admin
ENV PORT=3001 \
    GRPC_PORT=50051
EXPOSE 3001 50051
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD ["node", "deploy/docker/healthcheck.mjs", "3001", "/readyz"]
CMD ["node", "services/account-admin/dist/main.js"]

FROM runtime AS billing
ENV PORT=3002 \
    OPERATOR_PORT=8081
EXPOSE 3002 8081
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD ["node", "deploy/docker/healthcheck.mjs", "3002", "/readyz"]
CMD ["node", "services/billing/dist/main.js"]

# Last, so a plain `docker build .` produces the public edge.
FROM runtime AS search-gateway
ENV PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD ["node", "deploy/docker/healthcheck.mjs", "8080", "/readyz"]
CMD ["node", "services/search-gateway/dist/main.js"]
