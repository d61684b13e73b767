import { Writable } from "node:stream";
import { connect } from "nats";
import pino from "pino";
import { afterAll, expect, it } from "vitest";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it("recreates SHOAL_EVENTS when it disappears, says so, and resumes from its checkpoint", async () => {
  // An open external NATS stands in for an operator who deleted the stream with admin rights.
  const nats = await TestNatsServer.start();
  cleanups.push(() => nats.stop());
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n"))
          if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  const orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, { "Orchestrator.Auth.Token": "t" }),
    logger,
  );
  cleanups.push(() => orchestrator.stop());
  const admin = await connect({ servers: nats.url });
  cleanups.push(() => admin.close());
  const jsm = await admin.jetstreamManager();
  const before = orchestrator.publisher.position;
  await jsm.streams.delete("SHOAL_EVENTS");

  const reply = await joinNode(admin, "node-7", "t");
  expect(reply.Accepted).toBe(true);
  await waitFor(
    () => orchestrator.publisher.position > before,
    10_000,
    () => "the join published",
  );

  const info = await jsm.streams.info("SHOAL_EVENTS");
  expect(info.config).toMatchObject({ deny_purge: true, deny_delete: true, discard: "old" });
  // Only what came after the checkpoint: NodeRegistered and NodeCredentialBound of node-7.
  expect(info.state.messages).toBe(2);
  const subjects = [];
  for await (const m of await (
    await admin.jetstream().consumers.get("SHOAL_EVENTS")
  ).fetch({ max_messages: 10, expires: 1000 }))
    subjects.push(m.subject);
  expect(subjects).toEqual(["shoal.events.node.node-7.NodeRegistered", "shoal.events.node.node-7.NodeCredentialBound"]);
  expect(
    logs.some(
      (l) =>
        l.msg === "the cluster-event stream was missing; recreated it and resumed from the checkpoint" &&
        l.how === "created",
    ),
  ).toBe(true);
});
