# syntax=docker/dockerfile:1
# Bridge operator server: production image on the current Node LTS (24).
# Build:  docker build -t bridge-operator-server .
# Run:    docker run -p 8080:8080 -v /path/to/authority.json:/secrets/authority.json:ro \
#           -e BRIDGE_SOURCE_RPC_URL=... -e BRIDGE_TARGET_RPC_URL=... \
#           -e BRIDGE_SOURCE_CHAIN_ID=... -e BRIDGE_TARGET_CHAIN_ID=... \
#           -e BRIDGE_AUTHORITY_KEYPAIR=/secrets/authority.json bridge-operator-server
# (all five runtime variables or none: with none the server starts with the crank disabled).

# Base images pinned by digest (the multi-platform index of each tag), so that a rebuild gets the
# same Node and Debian: node:24-bookworm (Node 24.19.0) and node:24-bookworm-slim (Node 24.18.1),
# as docker-library/repo-info recorded the tags (docs/operating.md, "Deployment": how they were
# chosen and how to move them). The addon is N-API: built on one Node 24, loaded by the other.
# --- builder: all dependencies, TypeScript compiled to dist/, the PKCS#11 addon compiled ------
# The full (non-slim) image: it has the C++ toolchain and python3 that node-gyp needs.
FROM node:24-bookworm@sha256:da4221677e02b54ef6335adfa447578d512ad14f251024fb92ea433c2c102760 AS builder
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped here: `prepare` (the build) needs the sources, which are copied next.
RUN npm ci --ignore-scripts --no-audit --no-fund
# pkcs11js (the PKCS#11 binding behind BRIDGE_AUTHORITY_KEYPAIR=pkcs11:...) is a native N-API
# addon that --ignore-scripts left unbuilt. nodedir: the image's own Node headers, so node-gyp
# downloads nothing. N-API is ABI-stable: the runtime stage's Node 24 loads it as built here.
RUN npm rebuild pkcs11js --nodedir=/usr/local && node -e "require('pkcs11js')"
COPY tsconfig.json tsconfig.build.json ./
# A type check, then esbuild writes dist/: the server's and the ops CLI's bundles, nothing else
# (docs/development.md).
COPY scripts/bundle-server.mjs ./scripts/
COPY src ./src
RUN npm run build

# --- runtime: production dependencies and dist/ only, non-root --------------------------------
FROM node:24-bookworm-slim@sha256:235600a8101ab264e117b1768e925532262668dc9b581ef1dd7d96ced463b8e7 AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no build step in the runtime image. --omit=optional as well as --omit=dev: the
# compiler (TypeScript) is a devDependency and also an optional peer of @solana/codecs-numbers,
# which npm keeps unless both kinds are left out (docs/operating.md, "Installing on a VM").
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force \
  && test ! -e node_modules/typescript
# The one compiled file of the addon, built in the builder stage (no toolchain here).
COPY --from=builder /app/node_modules/pkcs11js/build/Release/pkcs11.node ./node_modules/pkcs11js/build/Release/pkcs11.node
RUN node -e "require('pkcs11js')"
COPY --from=builder /app/dist ./dist
# Static assets of GET /crank/ui (the bundle holds code only); resolved from dist/ as ../ui.
COPY ui ./ui

# The authority keypair is mounted from the secret manager at /secrets/authority.json (SPEC §5)
# and named by BRIDGE_AUTHORITY_KEYPAIR=/secrets/authority.json in the deployment (deploy/).
# It is not set here: any one runtime variable switches the crank on and makes the other four
# required, and the image must also start without runtime configuration (crank disabled).
# No key, env file or credential is ever copied into the image (.dockerignore).
# With the key in an HSM (docs/operating.md, "Keeping the key in an HSM") the token vendor's PKCS#11 module
# is added in an image derived from this one, and the PIN is mounted like the keypair.
EXPOSE 8080
# For `docker run` and Compose (Cloud Run ignores it and probes GET /health itself,
# deploy/cloud-run.yaml): unhealthy only when /health answers 503 (stalled, what a restart
# fixes) or nothing answers; degraded is 200. The slim image has no curl: Node's own fetch, on the
# port BRIDGE_BIND_ADDRESS or PORT names (8080 by default), over loopback.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const b=process.env.BRIDGE_BIND_ADDRESS;const p=b?b.slice(b.lastIndexOf(':')+1):(process.env.PORT||'8080');fetch('http://127.0.0.1:'+p+'/health',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]

# The `node` user (uid 1000) of the official image: the process cannot write to /app.
USER node
# Exec form: node is PID 1 and receives SIGTERM itself, which starts the graceful shutdown.
CMD ["node", "dist/index.js"]
