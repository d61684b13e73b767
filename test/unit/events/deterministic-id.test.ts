import { describe, expect, it } from "vitest";
import { deterministicId } from "../../../src/events/store/deterministic-id.ts";

describe("deterministicId", () => {
  it("makes the ids already stored: the same UUID (version 5 layout) for the same namespace and parts", () => {
    // Execution ids and workflow command ids are made by it and stored: these must never change.
    expect(deterministicId("placement", "j-1", "n1", "0")).toBe("abd1d858-1c90-5d5e-8622-836342e1e225");
    expect(deterministicId("workflow-node-reactions", "settled", "abc")).toBe("1ff9649c-737e-5f8b-8d8b-d833fe325823");
    expect(deterministicId("x")).toBe("11f6ad8e-c52a-5984-abaa-fd7c3b516503");
  });

  it("tells the parts apart: moving a part's boundary makes another id", () => {
    expect(deterministicId("placement", "ab", "c")).not.toBe(deterministicId("placement", "a", "bc"));
    expect(deterministicId("placement", "abc")).not.toBe(deterministicId("placementabc"));
  });
});
