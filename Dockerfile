# syntax=docker/dockerfile:1
# cascade as a container image: `docker build -t cascade-rpc .` at the repository root.
#
# Node 24 (LTS), pinned by exact version in both stages. .ci/fetch-node24 puts the same version
# under .cache/node24 so the e2e smoke test (test/e2e/node24.test.ts) runs on the image's runtime.
# The runtime stage holds exactly what `npm pack` ships (dist/, config/, monitoring/, web/) plus the
# production dependencies of package-lock.json: test/e2e/package.test.ts checks that content.

FROM node:24.22.3-bookworm-slim AS build
WORKDIR /src
# --ignore-scripts: `prepare` would build before the sources are copied; the build runs below.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md ./
COPY src ./src
COPY config ./config
COPY monitoring ./monitoring
COPY web ./web
RUN npm run build \
  && npm pack --ignore-scripts --pack-destination /tmp \
  && mkdir /pkg \
  && tar -xzf /tmp/cascade-rpc-*.tgz -C /pkg --strip-components=1

FROM node:24.22.3-bookworm-slim
ENV NODE_ENV=production \
  CONFIG_PATH=/app/config/balancer_config/config.toml
WORKDIR /app
COPY --from=build /pkg/package.json /src/package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force
COPY --from=build /pkg/ ./
# `cascade` on PATH; the data directory belongs to the image's unprivileged user `node` (1000).
RUN chmod 755 dist/cli.js \
  && ln -s /app/dist/cli.js /usr/local/bin/cascade \
  && mkdir -p /data \
  && chown node:node /data

USER node
# The working directory is the data volume: the default quotas_path ("quotas.json"), its lock
# and the client keys' runtime changes (quotas.key-changes.json) land in /data. Price lists are read by absolute path (/app/config/provider_config/…).
WORKDIR /data
VOLUME /data
EXPOSE 3000
# cascade is PID 1 and installs its own handlers: SIGTERM drains (up to 10 s) and writes
# quotas.json, SIGHUP reloads the config. Give `docker stop` more than the drain: -t 30.
STOPSIGNAL SIGTERM
# Slim images have no curl: Node's fetch asks /health. HEALTHCHECK_URL for another port.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL || 'http://127.0.0.1:3000/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["cascade"]
CMD ["serve"]
