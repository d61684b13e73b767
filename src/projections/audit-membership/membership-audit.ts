import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { nodeEvents } from "../../events/catalog/node-event-codec.ts";
import type { EventStore, RecordedEvent } from "../../events/store/event-store.ts";
import { nodeStream } from "../../events/streams.ts";
import { EventEnvelope } from "../event-envelope.ts";
import {
  MEMBERSHIP_EVENT_TYPES,
  MembershipLedger,
  type EventCause,
  type MembershipWindow,
  type NodeMembershipAudit,
} from "./membership-ledger.ts";

const PAGE = 1_000;

function causeOf(recorded: RecordedEvent): EventCause {
  const actor = recorded.metadata["actor"] as { type?: unknown; id?: unknown } | undefined;
  const reason = recorded.metadata["reason"];
  return {
    actor:
      actor === undefined || typeof actor.type !== "string" ? undefined : { type: actor.type, id: String(actor.id) },
    reason: typeof reason === "string" ? reason : undefined,
  };
}

function addTo(ledger: MembershipLedger, recorded: RecordedEvent): void {
  const envelope = new EventEnvelope(recorded);
  const event = envelope.of(nodeEvents);
  if (event === undefined) return;
  ledger.add(envelope.entityId, event, recorded.time, causeOf(recorded));
}

/**
 * Who joined, who let them in or kept them out, and how healthy they were over a window: read from the stored
 * events alone (docs/audit.md, Membership over a window).
 */
export class MembershipAudit {
  constructor(private readonly store: EventStore) {}

  /** The time of the first stored event (epoch ms); undefined for an empty store. */
  async firstEventTime(): Promise<number | undefined> {
    const [first] = await this.store.readAll({ maxCount: 1 });
    return first === undefined ? undefined : Date.parse(first.time);
  }

  /** Named nodes: each one's own stream, read whole (a node's stream is short next to the log). */
  async ofNodes(nodeIds: readonly string[], window: MembershipWindow): Promise<NodeMembershipAudit[]> {
    const ledger = new MembershipLedger(window);
    for (const nodeId of nodeIds) {
      ledger.include(nodeId);
      for (const recorded of await this.store.readStream(nodeStream(nodeId))) addTo(ledger, recorded);
    }
    return ledger.audits();
  }

  /**
   * Every node registered at some moment of the window: one pass, in store order, over the membership and health
   * events up to the window's end (read by type; the events before the window give each node's state at its start).
   */
  async ofCluster(window: MembershipWindow): Promise<NodeMembershipAudit[]> {
    const ledger = new MembershipLedger(window);
    const through = (await this.store.timeBounds(undefined, window.until)).through ?? (await this.store.headPosition());
    let after = 0;
    while (after < through) {
      const page = await this.store.readFiltered({ types: MEMBERSHIP_EVENT_TYPES }, { after, through, maxCount: PAGE });
      for (const recorded of page.events) addTo(ledger, recorded);
      if (page.scannedThrough <= after) break;
      after = page.scannedThrough;
      await yieldToEventLoop();
    }
    return ledger.audits();
  }
}
