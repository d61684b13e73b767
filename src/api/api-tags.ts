/**
 * The groups the OpenAPI document (and the page at /api/v1/docs) sorts operations into, in the
 * order they are listed. A closed set, so a route cannot invent a group the document does not
 * describe.
 */
export const API_TAGS = {
  Nodes:
    "Compute nodes and the orchestrator as the cluster sees them: list, describe, approve, reject, " +
    "delete, cordon, drain, label, pre-authorise; each node's history",
  Jobs: "Jobs in Bacalhau's models.Job shape: submit, list, describe, stop; their executions, history and output",
  Events: "The whole cluster's history, filtered: a cursored feed, NDJSON export and a live Server-Sent Events stream",
  Audit:
    "Tamper evidence and review: the hash chain, signed checkpoints, what changed between two moments, " +
    "membership per node",
  Agent:
    "The orchestrator itself, as Bacalhau's agent routes: liveness, readiness, its node, its version, its " +
    "configuration",
  Auth:
    "Who the caller is and what it may do; Bacalhau's CLI login: the methods it asks for before it holds a " +
    "credential, and the API-key method",
  Leaves: "Leaf nats-servers that hold compute nodes' connections near them",
  Metrics: "Prometheus metrics of the orchestrator",
  Documentation: "This API's own description",
} as const;

export type ApiTag = keyof typeof API_TAGS;
