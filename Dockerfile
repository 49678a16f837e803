# syntax=docker/dockerfile:1
# The pds image: Node 20 on alpine, production dependencies only, non-root, tini as init.
FROM node:20-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-alpine
RUN apk add --no-cache tini
ENV NODE_ENV=production \
    PORT=8080 \
    PDS_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json config.ts server.ts ./
COPY bin ./bin
COPY tools ./tools
COPY rest ./rest
COPY auth ./auth
COPY adapters ./adapters
COPY templates ./templates
RUN mkdir -p /data && chown 1000:1000 /data
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD wget -q -O /dev/null "http://127.0.0.1:${PORT}/healthz" || exit 1
ENTRYPOINT ["/sbin/tini", "--"]
CMD ["node", "bin/pds.js", "serve"]
