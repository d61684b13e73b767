import { afterAll, beforeAll } from "vitest";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import { secureStandIn } from "../support/kurrent-stand-in/secure-stand-in.ts";
import { eventStoreContract } from "./event-store-contract.ts";

// The real client against the stand-in (a test double speaking the server's gRPC protocol); every
// open() is a new connection to the same log, as a restart is. Once in clear, once in secure mode
// (TLS with a `shoal tls issue --kurrentdb-node` certificate, and a user), as docker-compose.yml runs KurrentDB.
let standIn: KurrentStandIn;
let secure: KurrentStandIn;
beforeAll(async () => {
  standIn = await KurrentStandIn.start();
  secure = (await secureStandIn()).standIn;
});
afterAll(async () => {
  await standIn.close();
  await secure.close();
});

// Each read goes through the client's native bridge, some 10 to 40 ms a read on a busy machine: the filtered reads
// page through a shorter log than SQLite's.
eventStoreContract("KurrentDB stand-in", async () => EsdbEventStore.open(standIn.url), undefined, 400_000, 600);
eventStoreContract(
  "KurrentDB stand-in over TLS, with a user",
  async () => EsdbEventStore.open(secure.url),
  undefined,
  400_000,
  600,
);
