# Build stage: every dependency (TypeScript and Vite included) to compile src/ and machines/ to dist/ and bundle the
# web console (ui/) into dist/ui.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY machines ./machines
COPY src ./src
COPY ui ./ui
# The image has no .git: the commit and its time /api/v1/agent/version reports come from
# `--build-arg SHOAL_GIT_COMMIT=$(git rev-parse HEAD) --build-arg SHOAL_BUILD_DATE=$(git log -1 --format=%cI)`,
# else they are Go's values for a build without version control.
ARG SHOAL_GIT_COMMIT
ARG SHOAL_BUILD_DATE
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# Runtime: node on the compiled CLI with production dependencies only; nats-server is there
# for the embedded default.
FROM node:20-bookworm-slim
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends nats-server \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
COPY package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
EXPOSE 1234 4222
ENTRYPOINT ["node", "/app/bin/shoal"]
