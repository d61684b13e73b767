import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { ClusterRole } from "../../src/cluster/cluster-role.ts";
import { LeaseTable } from "../../src/cluster/lease-table.ts";
import type { CommandOutcome, OwnedCommand } from "../../src/cluster/owned-command.ts";
import { OwnerCommands } from "../../src/cluster/owner-commands.ts";
import { Ownership } from "../../src/cluster/ownership.ts";
import { Presence } from "../../src/cluster/presence.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";
import { waitFor } from "../support/shoal-process.ts";

const nats = natsPerSuite();
let buckets = 0;

const PARTITIONS = 4;
const TTL_MS = 10_000;
const SAFETY_MS = TTL_MS / 5;
const alice = commandContext({ type: "operator", id: "alice" });
const Args = Schema.Struct({ N: Schema.Number });

/** A command that records each entity it is run on, and finishes only when the test lets it. */
function recording(name: string, duty?: string) {
  const ran: string[] = [];
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let hold = false;
  const command: OwnedCommand<typeof Args.Type> = {
    name,
    args: Args,
    ...(duty === undefined ? {} : { duty }),
    async run(entityId): Promise<CommandOutcome> {
      ran.push(entityId);
      if (hold) await released;
      return { position: ran.length, changed: true };
    },
  };
  return { command, ran, holdUntilReleased: () => (hold = true), release: () => release() };
}

/** Forwards `touch` on n1 and resolves once the owner is carrying it out, held there until released. */
async function forwardHeld(receiver: OwnerCommands, touch: ReturnType<typeof recording>) {
  touch.holdUntilReleased();
  const forwarded = receiver.run(touch.command, "n1", { N: 1 }, alice, undefined);
  await waitFor(
    () => touch.ran.length === 1,
    5_000,
    () => "the forwarded write to start",
  );
  // Wrapped: an async function returning the promise itself would wait for its outcome.
  return { forwarded };
}

/**
 * Two orchestrators on a real nats-server: the owner holds every partition and the jobs duty (the only member of its
 * lease bucket), on a lease clock the test moves; the receiver holds nothing and forwards everything to it.
 */
async function ownerAndReceiver({ maxInFlight }: { maxInFlight?: number } = {}) {
  const kv = await nats.nc.jetstream().views.kv(`owner-commands-${++buckets}`, { ttl: TTL_MS, history: 1 });
  const lease = { elapsed: 0 };
  const elapsed = () => lease.elapsed;
  const clock = new ManualClock();
  const ownerRole = new ClusterRole(PARTITIONS, silentLogger);
  ownerRole.duty("jobs");
  const presence = new Presence({
    nc: nats.nc,
    subject: `members.${buckets}`,
    owner: "a",
    forgetAfterMs: TTL_MS,
    elapsed,
  });
  presence.start();
  const ownership = new Ownership({
    table: new LeaseTable({ kv, owner: "a", ttlMs: TTL_MS, safetyMs: SAFETY_MS, elapsed }),
    presence,
    partitions: PARTITIONS,
    duties: ["jobs"],
    tickMs: 1_000,
    clock,
    deadlines: new DeadlineScheduler(clock),
    listener: ownerRole,
    log: silentLogger,
  });
  ownerRole.attach(ownership);
  const options = { nc: nats.nc, logger: silentLogger, timeoutMs: 5_000 };
  const owner = new OwnerCommands({
    ...options,
    role: ownerRole,
    self: "a",
    ...(maxInFlight === undefined ? {} : { maxInFlight }),
  });
  const receiver = new OwnerCommands({ ...options, role: new ClusterRole(PARTITIONS, silentLogger), self: "b" });
  const touch = recording("touch");
  const halt = recording("halt", "jobs");
  for (const commands of [owner, receiver]) {
    commands.register(touch.command);
    commands.register(halt.command);
  }
  await ownership.tick();
  expect(ownerRole.holdsDuty("jobs")).toBe(true);
  await owner.answer();
  const close = async () => {
    await owner.stop();
    await ownership.stop();
  };
  return { owner, receiver, touch, halt, lease, ownerRole, close };
}

describe("writes forwarded to their owner", () => {
  it("a stopping owner answers no new forward and finishes the ones under way before its stop resolves", async () => {
    const { owner, receiver, touch, close } = await ownerAndReceiver();
    const { forwarded } = await forwardHeld(receiver, touch);
    let stopped = false;
    const stopping = owner.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 100));
    // Its leases are handed back only after this stop: the write under way still appends under them.
    expect(stopped).toBe(false);
    await expect(receiver.run(touch.command, "n2", { N: 2 }, alice, undefined)).rejects.toMatchObject({
      kind: "Unavailable",
      retryAfterSeconds: 1,
    });
    touch.release();
    await stopping;
    await expect(forwarded).resolves.toMatchObject({ position: 1, changed: true });
    expect(touch.ran).toEqual(["n1"]);
    await close();
  });

  it("past its bound of forwards under way, the owner refuses more as Unavailable with a time to retry", async () => {
    const { receiver, touch, close } = await ownerAndReceiver({ maxInFlight: 1 });
    const { forwarded } = await forwardHeld(receiver, touch);
    await expect(receiver.run(touch.command, "n2", { N: 2 }, alice, undefined)).rejects.toMatchObject({
      kind: "Unavailable",
      message: "this orchestrator is carrying out 1 forwarded writes already; nothing was changed",
      retryAfterSeconds: 1,
    });
    touch.release();
    await expect(forwarded).resolves.toMatchObject({ changed: true });
    expect(touch.ran).toEqual(["n1"]);
    await close();
  });

  it("a duty holder refuses a forward once within its lease's safety margin, its gate not told yet", async () => {
    const { receiver, halt, lease, ownerRole, close } = await ownerAndReceiver();
    await expect(receiver.run(halt.command, "j1", { N: 1 }, alice, undefined)).resolves.toMatchObject({
      changed: true,
    });
    // Renewed at 0: valid until TTL minus the margin on this clock. The expiry tick has not run: the gate says held.
    lease.elapsed = TTL_MS - SAFETY_MS;
    expect(ownerRole.duty("jobs").held).toBe(true);
    await expect(receiver.run(halt.command, "j2", { N: 2 }, alice, undefined)).rejects.toMatchObject({
      kind: "Unavailable",
      message: "this orchestrator is no longer the holder of the jobs duty; nothing was changed",
    });
    expect(halt.ran).toEqual(["j1"]);
    await close();
  });
});
