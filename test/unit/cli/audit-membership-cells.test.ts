import { describe, expect, it } from "vitest";
import { goDuration, MEMBERSHIP_COLUMNS } from "../../../src/cli/commands/audit-membership-command.ts";
import { rowTexts } from "../../../src/cli/render-rows.ts";

describe("shoal audit membership's cells", () => {
  it("writes durations as Go does", () => {
    const cases: [number, string][] = [
      [0, "0s"],
      [250, "250ms"],
      [4_000, "4s"],
      [4_500, "4.5s"],
      [60_000, "1m0s"],
      [3_600_000, "1h0m0s"],
      [252_724_000, "70h12m4s"],
      [134_999_488, "37h29m59.488s"],
    ];
    for (const [ms, text] of cases) expect(goDuration(ms), String(ms)).toBe(text);
  });

  it("shows a node that had not joined, and a change by nobody, as dashes", () => {
    const row = {
      NodeID: "n-1",
      Joined: null,
      Membership: null,
      By: "",
      Reason: "",
      Changes: [],
      HealthyMs: 0,
      UnhealthyMs: 0,
      UnknownMs: 0,
    };
    expect(rowTexts(MEMBERSHIP_COLUMNS, row, { format: "table", wide: true })).toEqual([
      "n-1",
      "-",
      "-",
      "-",
      "",
      "0s",
      "0s",
      "0s",
      "0",
    ]);
  });
});
