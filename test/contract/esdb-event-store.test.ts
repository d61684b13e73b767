import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import { eventStoreContract } from "./event-store-contract.ts";

const url = process.env.SHOAL_TEST_EVENTSTORE_URL;
const SKIP_REASON =
  "SHOAL_TEST_EVENTSTORE_URL is not set (no KurrentDB server here: the stand-in's suite runs instead; " +
  "see docs/operations.md)";

// Said once on the console so a CI log shows why the real-server contract did not run.
if (!url) console.warn(`KurrentDB contract suite skipped: ${SKIP_REASON}`);

eventStoreContract(
  "KurrentDB",
  async () => EsdbEventStore.open(url as string),
  url ? undefined : SKIP_REASON,
  400_000,
  600,
);
