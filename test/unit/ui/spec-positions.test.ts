import { describe, expect, it } from "vitest";
import { specPositions } from "../../../ui/src/jobs/spec-positions.ts";

const YAML = `Name: hello
type: sometimes
Labels:
  app.kubernetes.io/name: web
Tasks:
  - Name: main
    Resources:
      CPU: lots
  - Name: second
    Engine: {}
`;

const lines = (text: string, paths: string[]) => specPositions(text, paths).map((p) => p && [p.line, p.exact]);

describe("specPositions", () => {
  it("places each field path the API names at its key's line in YAML, whatever case the text wrote it in", () => {
    expect(
      lines(YAML, ["Type", "Tasks[0].Resources.CPU", "Labels.app.kubernetes.io/name", "Tasks[1]", "", "Name"]),
    ).toEqual([
      [2, true],
      [8, true],
      [4, true],
      [9, true],
      [1, true],
      [1, true],
    ]);
  });

  it("places a field that is not in the text at the field around it", () => {
    expect(lines(YAML, ["Tasks[1].Engine.Params.Image", "Tasks[1].Timeouts", "Tasks[5].Name", "Count"])).toEqual([
      [10, false],
      [9, false],
      [5, false],
      [1, false],
    ]);
  });

  it("gives the offset of the line's first character, where the caret goes", () => {
    const [cpu] = specPositions(YAML, ["Tasks[0].Resources.CPU"]);
    expect(YAML.slice(cpu!.lineStart).split("\n")[0]).toBe("      CPU: lots");
  });

  it("reads JSON as the YAML it also is, keeping its positions", () => {
    const json = JSON.stringify(
      { Name: "x", Type: "sometimes", Tasks: [{ Name: "t", Resources: { CPU: "lots" } }] },
      null,
      2,
    );
    expect(lines(json, ["Type", "Tasks[0].Resources.CPU"])).toEqual([
      [3, true],
      [8, true],
    ]);
  });

  it("places nothing in a text that does not parse", () => {
    expect(specPositions("Name: [unclosed", ["Name"])).toEqual([undefined]);
  });
});
