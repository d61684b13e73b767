import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import { eventStoreContract } from "./event-store-contract.ts";

const url = process.env.SHOAL_TEST_EVENTSTORE_URL;

eventStoreContract(
  "EventStoreDB",
  async () => new EsdbEventStore(url as string),
  url ? undefined : "SHOAL_TEST_EVENTSTORE_URL is not set (EventStoreDB cannot run on this machine; see docker-compose.yml)",
);
