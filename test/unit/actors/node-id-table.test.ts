import { describe, expect, it } from "vitest";
import { NodeIdTable } from "../../../src/actors/node-id-table.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
/** The id as a message carries it: somewhere inside other bytes. */
const find = (table: NodeIdTable, id: string) => table.find(bytes(`xx${id}yy`), 2, bytes(id).length);

describe("NodeIdTable", () => {
  it("finds what a Map would, by the id's bytes, through growth, overwrites and deletions", () => {
    const table = new NodeIdTable();
    const model = new Map<string, number>();
    let seed = 7;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    // Few distinct ids, many operations: long probe runs, and deletions in the middle of them.
    const ids = Array.from({ length: 3000 }, (_, i) => `node-${i.toString(36)}`);
    for (let step = 0; step < 40_000; step++) {
      const id = ids[random(ids.length)] as string;
      if (random(3) === 0) {
        table.delete(id);
        model.delete(id);
      } else {
        table.set(id, step);
        model.set(id, step);
      }
      if (step % 997 === 0) for (const other of ids) expect(find(table, other), other).toBe(model.get(other) ?? -1);
    }
    expect(table.size).toBe(model.size);
    for (const id of ids) expect(find(table, id)).toBe(model.get(id) ?? -1);
  });

  it("matches whole ids only: no prefix, no extension, no other length", () => {
    const table = new NodeIdTable();
    table.set("n1", 1);
    table.set("n12", 2);
    expect(find(table, "n1")).toBe(1);
    expect(find(table, "n12")).toBe(2);
    expect(find(table, "n")).toBe(-1);
    expect(find(table, "n123")).toBe(-1);
    expect(find(table, "N1")).toBe(-1);
    expect(table.find(bytes("n12"), 0, 2)).toBe(1);
  });

  it("keeps no id its bytes could not spell (non-ASCII), and deleting an absent id changes nothing", () => {
    const table = new NodeIdTable();
    table.set("nœud", 1);
    expect(table.size).toBe(0);
    expect(find(table, "nœud")).toBe(-1);
    table.set("a", 1);
    table.delete("b");
    table.delete("nœud");
    expect(table.size).toBe(1);
    expect(find(table, "a")).toBe(1);
  });
});
