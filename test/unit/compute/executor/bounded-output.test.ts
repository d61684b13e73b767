import { describe, expect, it } from "vitest";
import { BoundedOutput } from "../../../../src/compute/executor/bounded-output.ts";

describe("BoundedOutput", () => {
  it("keeps everything under the limit", () => {
    const out = new BoundedOutput(10);
    out.push(Buffer.from("abc"));
    out.push(Buffer.from("def"));
    expect([out.text(), out.truncated, out.totalBytes]).toEqual(["abcdef", false, 6]);
  });

  it("keeps exactly the limit without calling it truncated", () => {
    const out = new BoundedOutput(4);
    out.push(Buffer.from("abcd"));
    expect([out.text(), out.truncated]).toEqual(["abcd", false]);
    out.push(Buffer.alloc(0));
    expect(out.truncated).toBe(false);
  });

  it("keeps the head across chunks and counts the rest", () => {
    const out = new BoundedOutput(5);
    out.push(Buffer.from("abc"));
    out.push(Buffer.from("defgh"));
    out.push(Buffer.from("ijk"));
    expect([out.text(), out.truncated, out.totalBytes]).toEqual(["abcde", true, 11]);
  });

  it.each([
    ["a 2-byte character cut after its first byte", "aé", 2, "a"],
    ["a 3-byte character cut after one byte", "ab€", 3, "ab"],
    ["a 3-byte character cut after two bytes", "ab€", 4, "ab"],
    ["a 4-byte character cut after three bytes", "a😀", 4, "a"],
    ["a complete 4-byte character at the limit", "a😀b", 5, "a😀"],
    ["a complete 3-byte character at the limit", "€€", 3, "€"],
  ])("drops %s rather than mangle it", (_name, input, limit, kept) => {
    const out = new BoundedOutput(limit);
    out.push(Buffer.from(input));
    expect(out.truncated).toBe(true);
    expect(out.text()).toBe(kept);
  });

  it("keeps nothing with a limit of 0 and still counts", () => {
    const out = new BoundedOutput(0);
    out.push(Buffer.from("xyz"));
    expect([out.text(), out.truncated, out.totalBytes]).toEqual(["", true, 3]);
  });
});
