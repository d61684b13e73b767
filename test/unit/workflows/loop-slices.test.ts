import { once } from "node:events";
import { createServer, connect, type AddressInfo, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { LoopSlices } from "../../../src/workflows/loop-slices.ts";

/** Busy for `ms` of real time: what a placement's synchronous evaluation is to the event loop. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

let server: Server | undefined;
let client: Socket | undefined;
afterEach(() => {
  client?.destroy();
  server?.close();
});

/** A TCP echo in this process: its answer needs the event loop to poll I/O several times. */
async function echo(): Promise<Socket> {
  server = createServer((s) => s.pipe(s));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  client = connect((server.address() as AddressInfo).port, "127.0.0.1");
  await once(client, "connect");
  return client;
}

/** 60 entrants of 2 ms each, all resumed at once; when the echo's answer came, counted in entrants that had run. */
async function burst(slices: LoopSlices): Promise<number> {
  const socket = await echo();
  let ran = 0;
  let answeredAfter = -1;
  socket.once("data", () => (answeredAfter = ran));
  socket.write("ping");
  await Promise.all(
    Array.from({ length: 60 }, () =>
      slices.run(() => {
        busy(2);
        ran++;
      }),
    ),
  );
  await new Promise<void>((resolve) => (answeredAfter >= 0 ? resolve() : socket.once("data", () => resolve())));
  return answeredAfter === -1 ? ran : answeredAfter;
}

describe("LoopSlices", () => {
  it("lets I/O in between slices of a burst: a socket's answer comes before the burst ends", async () => {
    const answeredAfter = await burst(new LoopSlices(10));
    expect(answeredAfter).toBeLessThan(60);
  });

  it("without slices (one endless slice), the same burst holds I/O until its end", async () => {
    // Why the slices are there: this is the behaviour they replace.
    const answeredAfter = await burst(new LoopSlices(Number.POSITIVE_INFINITY));
    expect(answeredAfter).toBe(60);
  });

  it("runs work back to back while the slice lasts, without a turn of the event loop", async () => {
    let t = 0;
    const slices = new LoopSlices(10, () => t);
    await slices.run(() => undefined); // the first slice begins in a turn of its own
    let turned = false;
    setImmediate(() => (turned = true));
    for (let i = 0; i < 5; i++) await slices.run(() => (t += 2));
    expect(turned).toBe(false);
    t += 1; // 11 ms into the slice: spent
    await slices.run(() => undefined);
    expect(turned).toBe(true);
  });

  it("runs waiting work in the order it came, each slice taking what fits", async () => {
    let t = 0;
    const slices = new LoopSlices(10, () => t);
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        slices.run(() => {
          order.push(i);
          t += 6; // two fit in a slice of 10 (the second ends it)
        }),
      ),
    );
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("hands the work's failure to its caller and goes on with the rest", async () => {
    const slices = new LoopSlices(10);
    const failing = slices.run(() => {
      throw new Error("refused");
    });
    const next = slices.run(() => 7);
    await expect(failing).rejects.toThrow("refused");
    await expect(next).resolves.toBe(7);
  });
});
