# Single-container deploy: receiver and workers in one process (INBOX_ROLE=all).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# npm ci's postinstall applies patches/ (patch-package); without the folder the patch is silently skipped.
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json drizzle.config.ts ./
COPY drizzle ./drizzle
COPY src ./src
COPY bin ./bin
USER node
EXPOSE 3000
# Node 24 runs the TypeScript sources directly (type stripping): there is no build step. The node
# flags are package.json's `start` script's (test/first-run/node-flags.test.ts keeps them equal).
CMD ["node", "--max-semi-space-size=8", "src/main.ts"]
