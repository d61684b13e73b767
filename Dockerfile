FROM node:20-bookworm-slim
WORKDIR /app
# better-sqlite3 compiles from source; nats-server is there for the embedded default.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ nats-server \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY machines ./machines
COPY src ./src
EXPOSE 1234 4222
ENTRYPOINT ["./bin/shoal"]
