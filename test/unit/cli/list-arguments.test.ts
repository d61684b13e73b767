import { describe, expect, it } from "vitest";
import { listOrder } from "../../../src/cli/list-order.ts";
import { oneJobId } from "../../../src/cli/one-job-id.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

const queryOf = (order: ReturnType<typeof listOrder>) => {
  const q = new URLSearchParams({ limit: "5" });
  order.query(q);
  return q.toString();
};

describe("a list command's order flags", () => {
  it("none: nothing on the query, nothing to repeat", () => {
    const order = listOrder({}, "shoal job list --help");
    expect(queryOf(order)).toBe("limit=5");
    expect(order.flags).toEqual([]);
  });

  it("--order-by and --order-reversed (or --reverse): on the query, and repeated for the next page", () => {
    for (const reversed of [{ "order-reversed": true }, { reverse: true }]) {
      const order = listOrder({ "order-by": "modified_at", ...reversed }, "shoal job list --help");
      expect(queryOf(order)).toBe("limit=5&order_by=modified_at&reverse=true");
      expect(order.flags).toEqual(["--order-by modified_at", "--order-reversed"]);
    }
  });

  it("an order Bacalhau does not have is a usage error naming the choices and the help", () => {
    let error: unknown;
    try {
      listOrder({ "order-by": "name" }, "shoal job executions --help");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({
      message: '--order-by must be one of created_at, modified_at, id, got "name"',
      help: "shoal job executions --help",
    });
  });
});

describe("the one job id of a job command", () => {
  it("is the one positional", () => {
    expect(oneJobId(["j-1"], "describe", "shoal job describe --help")).toBe("j-1");
  });

  it("none or more: a usage error naming the command, pointing at its help (or shoal's)", () => {
    for (const [positionals, help] of [
      [[], "shoal job stop --help"],
      [["a", "b"], undefined],
    ] as const) {
      try {
        oneJobId(positionals, "stop", help);
        expect.unreachable();
      } catch (e) {
        expect(e).toMatchObject({
          name: "UsageError",
          message: "shoal job stop takes exactly one job id",
          help: help ?? "shoal --help",
        });
      }
    }
  });
});
