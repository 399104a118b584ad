# syntax=docker/dockerfile:1.7
#
# One multi-stage build for every deployable of the platform. Pick the deployable with
# --target (search-gateway, account-admin, billing, provider-sim, mail-catcher); the ledger worker runs
# the billing image with `node services/billing/dist/worker.js`.
#
#   docker build --target search-gateway -t svc/search-gateway:local .
#
# The base image is named once, here. For a release, pin it to the digest the release was
# tested with, so a rebuild gets the same bytes:
#   docker buildx imagetools inspect node:24-bookworm-slim     (prints "Digest: sha256:...")
#   docker build --build-arg NODE_IMAGE=node:24-bookworm-slim@sha256:<digest> ...
# (docs/operations.md, "Images").

ARG NODE_IMAGE=node:24-bookworm-slim

# ---- manifests: the lockfile and every workspace's package.json, nothing else ---------
# Installs depend only on these files, so a change to the sources reuses the cached install.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY packages/address-policy/package.json packages/address-policy/
COPY packages/config/package.json packages/config/
COPY packages/contracts/package.json packages/contracts/
COPY packages/csv/package.json packages/csv/
COPY packages/errors/package.json packages/errors/
COPY packages/grpc/package.json packages/grpc/
COPY packages/http-edge/package.json packages/http-edge/
COPY packages/ids/package.json packages/ids/
COPY packages/keys/package.json packages/keys/
COPY packages/logging/package.json packages/logging/
COPY packages/mail-catcher/package.json packages/mail-catcher/
COPY packages/metrics/package.json packages/metrics/
COPY packages/money/package.json packages/money/
COPY packages/pg-migrate/package.json packages/pg-migrate/
COPY packages/prisma-schema-check/package.json packages/prisma-schema-check/
COPY packages/redis-client/package.json packages/redis-client/
COPY packages/sdk/package.json packages/sdk/
COPY packages/test-kit/package.json packages/test-kit/
COPY packages/tracing/package.json packages/tracing/
COPY services/account-admin/package.json services/account-admin/
COPY services/billing/package.json services/billing/
COPY services/search-gateway/package.json services/search-gateway/
COPY tools/fake-stripe/package.json tools/fake-stripe/
COPY tools/openapi/package.json tools/openapi/
COPY tools/provider-sim/package.json tools/provider-sim/

# ---- build: the whole install (npm ci: exactly the lockfile), then the sources --------
FROM manifests AS build
ENV NODE_ENV=development \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
# No install scripts here: the Prisma clients are generated below, once the schemas are in.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY tsconfig.base.json tsconfig.build.json tsconfig.json ./
COPY proto ./proto
COPY scripts ./scripts
COPY packages ./packages
COPY services ./services
COPY tools ./tools
RUN npm run generate:prisma && npm run build
# What a running service reads: each workspace's package.json and dist/ (without source
# maps, declarations or build info), the migrations and the OpenAPI document. No src/, no
# test/, and not the test kit, the fake Stripe, the SDK or the OpenAPI tooling.
RUN mkdir -p /out \
 && for ws in packages/* services/* tools/*; do \
      mkdir -p "/out/$ws" && cp "$ws/package.json" "/out/$ws/"; \
      case "$ws" in packages/test-kit|packages/sdk|packages/prisma-schema-check|tools/openapi|tools/fake-stripe) continue ;; esac; \
      if [ -d "$ws/dist" ]; then cp -r "$ws/dist" "/out/$ws/dist"; fi; \
    done \
 && cp -r services/account-admin/prisma /out/services/account-admin/prisma \
 && cp -r services/billing/prisma /out/services/billing/prisma \
 && cp services/search-gateway/openapi.json /out/services/search-gateway/openapi.json \
 && find /out \( -name '*.map' -o -name '*.d.ts' -o -name '*.tsbuildinfo' -o -name '*.spec.js' \) -delete

# ---- production dependencies only, from the same lockfile -------------------------------
FROM manifests AS prod-deps
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime: built output and production dependencies, owned by root ----------------
FROM ${NODE_IMAGE} AS runtime
# tini forwards SIGTERM to node and reaps zombies (node is not meant to be PID 1).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0
COPY package.json package-lock.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /out/ ./
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

# The local stack's mail catcher (docker-compose only; production sends through a real relay).
FROM runtime AS mail-catcher
ENV PORT=1080 \
    SMTP_PORT=1025
EXPOSE 1025 1080
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD ["node", "deploy/docker/healthcheck.mjs", "1080", "/healthz"]
CMD ["node", "packages/mail-catcher/dist/main.js"]

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
