import { join } from "node:path";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { tempDir } from "../support/fixtures.ts";
import { eventStoreContract } from "./event-store-contract.ts";

eventStoreContract("SQLite", async () => new SqliteEventStore(join(tempDir(), "shoal.db")));
