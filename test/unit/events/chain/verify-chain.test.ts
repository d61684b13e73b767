import { describe, expect, it } from "vitest";
import { eventLink, ZERO_LINK } from "../../../../src/events/chain/event-link.ts";
import { chainStart, verifyChain, type ChainRow } from "../../../../src/events/chain/verify-chain.ts";

/** `n` linked rows from the genesis after `after`, as the writer links them. */
function rows(n: number, after = 0, from: Buffer = ZERO_LINK): ChainRow[] {
  const out: ChainRow[] = [];
  let link = from;
  for (let i = 1; i <= n; i++) {
    const position = after + i;
    const fields = {
      position,
      id: `e-${position}`,
      stream: `node-n-${position % 3}`,
      revision: Math.floor(position / 3),
      type: "NodeLabelsUpdated",
      time: new Date(Date.UTC(2026, 10, 29, 0, 0, position)).toISOString(),
      data: `{"n":${position}}`,
      metadata: "{}",
    };
    link = eventLink(link, position - 1, fields);
    out.push({ ...fields, link });
  }
  return out;
}

async function* each(list: readonly ChainRow[]): AsyncGenerator<ChainRow> {
  yield* list;
}

describe("verifyChain", () => {
  it("reports its progress every so many events, and the whole walk at the end", async () => {
    const progress: [number, number][] = [];
    const verdict = await verifyChain({
      genesis: { afterPosition: 0, link: ZERO_LINK },
      rows: each(rows(25)),
      progressEvery: 10,
      onProgress: (through, events) => progress.push([through, events]),
    });
    expect(verdict).toMatchObject({ ok: true, events: 25, through: 25 });
    expect(progress).toEqual([
      [10, 10],
      [20, 20],
    ]);
  });

  it("stops at `to`, leaving the rows after it unread", async () => {
    let read = 0;
    async function* counted(): AsyncGenerator<ChainRow> {
      for (const r of rows(50)) {
        read++;
        yield r;
      }
    }
    const verdict = await verifyChain({ genesis: { afterPosition: 0, link: ZERO_LINK }, rows: counted(), to: 20 });
    expect(verdict).toMatchObject({ ok: true, events: 20, through: 20 });
    expect(read).toBe(21);
  });
});

describe("chainStart", () => {
  const genesis = { afterPosition: 100, link: Buffer.alloc(32, 7) };
  it("starts at the first event unless asked, from the genesis at it, and says what it trusts past it", () => {
    expect(chainStart(undefined, genesis, undefined)).toEqual({});
    expect(chainStart(50, genesis, undefined)).toMatchObject({
      note: expect.stringContaining("stored before the chain began and are checked together"),
    });
    expect(chainStart(101, genesis, undefined)).toEqual({ start: { afterPosition: 100, link: genesis.link } });
    const stored = Buffer.alloc(32, 9);
    expect(chainStart(150, genesis, stored)).toEqual({
      start: { afterPosition: 149, link: stored },
      note: expect.stringContaining("the link stored at position 149 is trusted"),
    });
    expect(() => chainStart(150, genesis, null)).toThrow("position 149 holds no linked event to start from");
  });
});
