import type { Msg } from "nats";
import { describe, expect, it } from "vitest";
import { asksForReply, subjectOf } from "../../src/transport/message-bytes.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";

/**
 * The heartbeat hot path reads what nats.js keeps of a message before it makes strings of it.
 * These pin that the installed nats.js keeps it as message-bytes.ts expects: a version that
 * keeps it otherwise would still be read right (through the strings), only slower — this says so.
 */
const nats = natsPerSuite();

async function deliver(send: (subject: string) => void): Promise<Msg> {
  const subject = `bytes.test.${Math.random().toString(36).slice(2)}`;
  const received = new Promise<Msg>((resolve) =>
    nats.nc.subscribe(subject, { max: 1, callback: (_e, m) => resolve(m) }),
  );
  await nats.nc.flush();
  send(subject);
  return received;
}

describe("a delivered message's bytes", () => {
  it("are its subject as received, and a published message asks for no reply", async () => {
    const msg = await deliver((subject) => nats.nc.publish(subject, new Uint8Array([1])));
    const subject = subjectOf(msg);
    expect(subject).toBeInstanceOf(Uint8Array); // the installed nats.js: no string decoded
    expect(new TextDecoder().decode(subject as Uint8Array)).toBe(msg.subject);
    expect(asksForReply(msg)).toBe(false);
  });

  it("tell a request apart, without the reply subject decoded", async () => {
    let asked: boolean | undefined;
    nats.nc.subscribe("bytes.test.request", {
      callback: (_e, m) => {
        asked = asksForReply(m);
        m.respond(new Uint8Array([3]));
      },
    });
    await nats.nc.flush();
    const reply = await nats.nc.request("bytes.test.request", new Uint8Array([2]), { timeout: 5000 });
    expect([...reply.data]).toEqual([3]);
    expect(asked).toBe(true);
  });
});
