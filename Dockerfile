# syntax=docker/dockerfile:1
#
# Roomkeeper: one image, two entry points.
#   operator (default):  node dist/operator/src/main.js      health + /metrics on 8081
#   gateway:             node dist/api-gateway/src/main.js   management API 8080, rooms API 8090
# The Helm chart sets `command` for the gateway. Build with:
#   docker build -t roomkeeper:dev .
#
# Stages: `build` compiles TypeScript with the dev toolchain; `deps` installs production
# dependencies only (the `node` devDependency ships its own Node binary and must not reach the
# runtime); `runtime` copies dist/, proto/, package files and the production node_modules.

FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Scripts stay off: the only one the build would run fetches the `node` devDependency's binary,
# and tsc runs on the base image's Node.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY common ./common
COPY operator ./operator
COPY api-gateway ./api-gateway
COPY sandbox ./sandbox
COPY proto ./proto
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

FROM node:22-bookworm-slim AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:22-bookworm-slim AS runtime
LABEL org.opencontainers.image.title="roomkeeper" \
      org.opencontainers.image.description="Roomkeeper operator and gateway (Maestro-compatible game-room fleets on Kubernetes)" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production
# The git commit built (docker build --build-arg ROOMKEEPER_REVISION=$(git rev-parse HEAD)): the
# revision label of roomkeeper_build_info on /metrics.
ARG ROOMKEEPER_REVISION=unknown
ENV ROOMKEEPER_REVISION=$ROOMKEEPER_REVISION
WORKDIR /app
COPY --from=deps --chown=0:0 /app/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/dist ./dist
COPY --chown=0:0 package.json package-lock.json ./
COPY --chown=0:0 proto ./proto
# Files stay owned by root and read-only to the process; the chart also mounts the root file
# system read-only and gives /tmp as an emptyDir.
USER 10001:10001
EXPOSE 8080 8081 8090
CMD ["node", "dist/operator/src/main.js"]
