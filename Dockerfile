# Single-container deploy: receiver and workers in one process (INBOX_ROLE=all). Needs DATABASE_URL:
# the image has no embedded PostgreSQL. compose.yaml runs it beside a PostgreSQL; docs/deployment.md.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# npm ci's postinstall applies patches/ (patch-package); without the folder the patch is silently skipped.
COPY patches ./patches
# No devDependencies, and no optional ones: those are the embedded-PostgreSQL binaries that
# `npm start` uses for development (60 of the 115 MB), which an image never runs.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund
COPY tsconfig.json drizzle.config.ts ./
COPY drizzle ./drizzle
COPY src ./src
COPY bin ./bin
# `docker exec <container> inboxctl …` as the image's user: npx would try to chmod the bin in a
# folder `node` cannot write (EPERM). The link's target is executable (git keeps its mode).
RUN ln -s /app/bin/inboxctl.ts /usr/local/bin/inboxctl
USER node
EXPOSE 3000
# Healthy means ready: the database answers and the service accepts webhooks (/readyz). The first
# start migrates the database, hence the start period.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node 24 runs the TypeScript sources directly (type stripping): there is no build step. The node
# flags are package.json's `start` script's (test/first-run/node-flags.test.ts keeps them equal).
CMD ["node", "--max-semi-space-size=8", "src/main.ts"]
