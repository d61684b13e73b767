import { EventEnvelope } from "../../src/projections/event-envelope.ts";
import type { Workflow } from "../../src/workflows/workflow.ts";
import { exampleEvent } from "./example-events.ts";
import { recordedEvent } from "./recorded-event.ts";

/** A workflow (named `name`) with one command per node cordoned, for that node, to the handler `thing`. */
export const thingsWorkflow = (name = "things"): Workflow => ({
  name,
  react: ({ event, entityId }) =>
    event.type === "NodeCordoned" ? [{ handler: "thing", entityId, type: "DoThing", reason: "cordoned" }] : [],
});

/** `name` (say "a1": node a's first input) as the store delivers it: NodeCordoned on `node-a`, id `name`. */
export const cordonedInput = (name: string, position: number): EventEnvelope => {
  const node = name.slice(0, 1);
  return new EventEnvelope({
    ...recordedEvent(`node-${node}`, exampleEvent("NodeCordoned", node), position),
    id: name,
  });
};

/** The inputs named, at positions 1, 2, … in that order. */
export const cordonedInputs = (...names: string[]): EventEnvelope[] => names.map((n, i) => cordonedInput(n, i + 1));
