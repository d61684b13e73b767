import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import { eventStoreContract } from "./event-store-contract.ts";

const url = process.env.SHOAL_TEST_EVENTSTORE_URL;
const SKIP_REASON =
  "SHOAL_TEST_EVENTSTORE_URL is not set (EventStoreDB cannot run on this machine; see docker-compose.yml)";

// Said once on the console so a CI log shows why the EventStoreDB contract did not run.
if (!url) console.warn(`EventStoreDB contract suite skipped: ${SKIP_REASON}`);

eventStoreContract("EventStoreDB", async () => new EsdbEventStore(url as string), url ? undefined : SKIP_REASON);
