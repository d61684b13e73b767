import { afterEach, describe, expect, it } from "vitest";
import type { NodeState } from "../../../src/api/nodes/node-state.ts";
import type { Column } from "../../../src/cli/column.ts";
import { formatCsv } from "../../../src/cli/csv.ts";
import { nodeColumns } from "../../../src/cli/node-columns.ts";
import { outputOptions, type OutputValues } from "../../../src/cli/output-options.ts";
import { renderRows } from "../../../src/cli/render-rows.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

interface Row {
  readonly id: string;
  readonly note: string;
  readonly at: Date;
}

const AT = new Date("2026-11-30T00:00:00.000Z");
const ID = "j-7a4c7576-5fbf-461b-b644-952b571ec500";

const COLUMNS: readonly Column<Row>[] = [
  { header: "ID", cell: (r, { full }) => (full ? r.id : r.id.slice(0, 10)) },
  { header: "AT", cell: (r) => r.at },
  { header: "NOTE", cell: (r) => r.note },
  { header: "UNTIL", cell: (r, { time }) => `until ${time(r.at)}`, wide: true },
];

const ROWS: readonly Row[] = [
  { id: ID, note: 'a "quoted", two-part note', at: AT },
  { id: ID, note: "two\nlines \u001b[2J", at: AT },
];

const plain = { wide: false, style: false, header: true } as const;
const bold = (text: string) => `\u001b[1m${text}\u001b[0m`;

const savedTz = process.env.TZ;
const savedNoColor = process.env.NO_COLOR;
const savedTty = Object.getOwnPropertyDescriptor(process.stdout, "isTTY");
afterEach(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
  if (savedNoColor === undefined) delete process.env.NO_COLOR;
  else process.env.NO_COLOR = savedNoColor;
  if (savedTty) Object.defineProperty(process.stdout, "isTTY", savedTty);
  else delete (process.stdout as { isTTY?: boolean }).isTTY;
});

const usageError = (fn: () => unknown): UsageError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error("no usage error");
};

describe("csv: RFC 4180", () => {
  it("quotes fields holding a comma, a quote or a line break, quotes doubled; a header row first", () => {
    expect(
      formatCsv(
        ["A", "B"],
        [
          ["plain", "x,y"],
          ['say "hi"', "one\ntwo"],
          ["", "tab\there"],
        ],
      ),
    ).toBe('A,B\nplain,"x,y"\n"say ""hi""","one\ntwo"\n,tab\there');
  });

  it("shows other control characters escaped, never raw", () => {
    const csv = formatCsv(undefined, [["\u001b[2Jboom", "cr\rhere"]]);
    expect(csv).toBe("\\u001b[2Jboom,cr\\u000dhere");
  });

  it("renders whole values and RFC 3339 UTC times, with the wide columns only when asked; --hide-header", () => {
    process.env.TZ = "Asia/Kolkata";
    const csv = renderRows(COLUMNS, ROWS, { ...plain, format: "csv" });
    expect(csv.split("\n")[0]).toBe("ID,AT,NOTE");
    expect(csv.split("\n")[1]).toBe(`${ID},2026-11-30T00:00:00.000Z,"a ""quoted"", two-part note"`);
    const wide = renderRows(COLUMNS, ROWS, { ...plain, format: "csv", wide: true, header: false });
    expect(wide.split("\n")[0]).toBe(
      `${ID},2026-11-30T00:00:00.000Z,"a ""quoted"", two-part note",until 2026-11-30T00:00:00.000Z`,
    );
  });
});

describe("tables", () => {
  it("plain: columns two spaces apart, local times in the one format, ids shortened, no wide columns", () => {
    process.env.TZ = "Asia/Kolkata";
    const table = renderRows(COLUMNS, ROWS, { ...plain, format: "table" });
    expect(table.split("\n")).toEqual([
      "ID          AT                   NOTE",
      'j-7a4c7576  2026-11-30 05:30:00  a "quoted", two-part note',
      "j-7a4c7576  2026-11-30 05:30:00  two; lines \\u001b[2J",
    ]);
  });

  it("honours TZ: the same instant in another zone", () => {
    process.env.TZ = "America/New_York";
    const table = renderRows(COLUMNS, ROWS.slice(0, 1), { ...plain, format: "table", header: false });
    expect(table).toBe('j-7a4c7576  2026-11-29 19:00:00  a "quoted", two-part note');
  });

  it("wide: the wide columns and whole values", () => {
    process.env.TZ = "UTC";
    const table = renderRows(COLUMNS, ROWS.slice(0, 1), { ...plain, format: "table", wide: true });
    expect(table.split("\n")[0]?.split(/ {2,}/)).toEqual(["ID", "AT", "NOTE", "UNTIL"]);
    expect(table.split("\n")[1]?.split(/ {2,}/)).toEqual([
      ID,
      "2026-11-30 00:00:00",
      'a "quoted", two-part note',
      "until 2026-11-30 00:00:00",
    ]);
  });

  it("styled: borders and a bold header; NO_COLOR keeps the borders only; no header with --hide-header", () => {
    process.env.TZ = "UTC";
    delete process.env.NO_COLOR;
    const styled = renderRows(COLUMNS, ROWS.slice(0, 1), { ...plain, format: "table", style: true });
    expect(styled.split("\n")).toEqual([
      "┌────────────┬─────────────────────┬───────────────────────────┐",
      `│ ${bold("ID        ")} │ ${bold("AT                 ")} │ ${bold("NOTE                     ")} │`,
      "├────────────┼─────────────────────┼───────────────────────────┤",
      '│ j-7a4c7576 │ 2026-11-30 00:00:00 │ a "quoted", two-part note │',
      "└────────────┴─────────────────────┴───────────────────────────┘",
    ]);
    process.env.NO_COLOR = "1";
    const colourless = renderRows(COLUMNS, ROWS.slice(0, 1), { ...plain, format: "table", style: true });
    expect(colourless).not.toContain("\u001b");
    expect(colourless.split("\n")[1]).toBe("│ ID         │ AT                  │ NOTE                      │");
    const headless = renderRows(COLUMNS, ROWS.slice(0, 1), { ...plain, format: "table", style: true, header: false });
    expect(headless.split("\n")).toHaveLength(3);
    expect(headless).not.toContain("NOTE");
  });

  it("a cell's own escape sequence is shown, never run, in a styled table too", () => {
    const styled = renderRows(COLUMNS, ROWS.slice(1), { ...plain, format: "table", style: true, header: false });
    expect(styled).toContain("\\u001b[2J");
    expect(styled).not.toContain("\u001b[2J");
  });
});

describe("the output flags", () => {
  const spec = { fallback: "table", help: "shoal job list --help" } as const;
  const options = (values: OutputValues, over: Partial<Parameters<typeof outputOptions>[1]> = {}) =>
    outputOptions(values, { ...spec, ...over });

  it("-o wide and --wide are the same table; --wide with csv keeps csv", () => {
    expect(options({ output: "wide" })).toMatchObject({ format: "table", wide: true });
    expect(options({ wide: true })).toMatchObject({ format: "table", wide: true });
    expect(options({ output: "csv", wide: true })).toMatchObject({ format: "csv", wide: true });
    expect(options({ output: "csv", "hide-header": true })).toMatchObject({ format: "csv", header: false });
  });

  it("styles a table on a terminal only, and never with --no-style", () => {
    Object.defineProperty(process.stdout, "isTTY", { value: true, configurable: true });
    expect(options({}).style).toBe(true);
    expect(options({ "no-style": true }).style).toBe(false);
    expect(options({ output: "csv" }).style).toBe(false);
    Object.defineProperty(process.stdout, "isTTY", { value: false, configurable: true });
    expect(options({}).style).toBe(false);
  });

  it("an unknown format names the valid ones and the help", () => {
    const e = usageError(() => options({ output: "xml" }));
    expect(e.message).toBe("--output must be table, wide, json, yaml or csv, got xml");
    expect(e.help).toBe("shoal job list --help");
    expect(usageError(() => options({ output: "csv" }, { without: ["csv"] })).message).toBe(
      "--output must be table, wide, json or yaml, got csv",
    );
    expect(options({ output: "ndjson" }, { extra: ["ndjson"] }).format).toBe("ndjson");
  });

  it("a table flag with json or yaml is a usage error; without -o it asks for a table", () => {
    expect(usageError(() => options({ output: "json", "hide-header": true })).message).toBe(
      "--hide-header shapes table and csv output, not json",
    );
    expect(usageError(() => options({ output: "yaml", wide: true })).message).toBe(
      "--wide shapes table and csv output, not yaml",
    );
    expect(options({ "no-style": true }, { fallback: "yaml" }).format).toBe("table");
    expect(options({}, { fallback: "yaml" }).format).toBe("yaml");
  });
});

describe("node list --show", () => {
  const headers = (show: string[] | undefined, wide = false) =>
    nodeColumns(show, wide, "shoal node --help")
      .filter((c) => wide || c.wide !== true)
      .map((c) => c.header);
  const ALWAYS = ["ID", "TYPE", "APPROVAL", "STATUS", "SCHEDULING"];
  const VERSION = ["VERSION", "ARCHITECTURE", "OS"];
  const FEATURES = ["ENGINES", "INPUTS FROM", "OUTPUTS"];
  const CAPACITY = ["CPU", "MEMORY", "DISK", "GPU"];

  it("Bacalhau's default groups, labels and capacity", () => {
    expect(headers(undefined)).toEqual([...ALWAYS, "LABELS", ...CAPACITY, "DRAIN"]);
  });

  it("the groups named, in their order, as comma lists or repeated; '' for none", () => {
    expect(headers(["version,features", "labels"])).toEqual([...ALWAYS, ...VERSION, ...FEATURES, "LABELS", "DRAIN"]);
    expect(headers([""])).toEqual([...ALWAYS, "DRAIN"]);
  });

  it("wide: every group, and the wide columns", () => {
    expect(headers(undefined, true)).toEqual([
      ...ALWAYS,
      "HOSTNAME",
      "LABELS",
      ...VERSION,
      ...FEATURES,
      ...CAPACITY,
      "DRAIN",
      "LAST HEARTBEAT",
    ]);
  });

  it("an unknown group is a usage error naming the valid ones", () => {
    const e = usageError(() => headers(["labels,gpus"]));
    expect(e.message).toBe('--show takes column groups among labels, version, features, capacity, got "gpus"');
    expect(e.help).toBe("shoal node --help");
  });

  it("SCHEDULING: eligible only for an APPROVED compute node neither cordoned nor draining", () => {
    const scheduling = nodeColumns([""], false, "shoal node --help").find((c) => c.header === "SCHEDULING")!;
    const node = (type: string, membership: string, more: object = {}) =>
      ({ Info: { NodeType: type }, Membership: membership, Cordoned: false, ...more }) as unknown as NodeState;
    const cell = (n: NodeState) => scheduling.cell(n, { full: false, time: (d: Date) => d.toISOString() });
    expect(cell(node("Compute", "APPROVED"))).toBe("eligible");
    expect(cell(node("Compute", "PENDING"))).toBe("ineligible");
    expect(cell(node("Compute", "REJECTED"))).toBe("ineligible");
    expect(cell(node("Compute", "PENDING", { Cordoned: true }))).toBe("cordoned");
    expect(cell(node("Compute", "APPROVED", { Drain: { Status: "drained" } }))).toBe("ineligible");
    expect(cell(node("Requester", "APPROVED"))).toBe("-");
  });

  it("a drain's deadline in the format of the output: local in a table, RFC 3339 in csv", () => {
    process.env.TZ = "Asia/Kolkata";
    const node = {
      Info: {
        NodeID: "n-617ba839-9c21-4c7d-9cc2-b8359f8e4d5c",
        NodeType: "Compute",
        Hostname: "edge",
        Labels: { zone: "a", Architecture: "amd64" },
        BacalhauVersion: { GitVersion: "v1.7.0", GOOS: "linux", GOARCH: "amd64" },
      },
      Membership: "APPROVED",
      Health: "HEALTHY",
      Cordoned: false,
      ConnectionState: { Status: "CONNECTED", LastHeartbeat: "2026-11-30T00:00:00.000Z" },
      Drain: { Status: "draining", Deadline: "2026-11-30T01:00:00.000Z" },
    } as unknown as NodeState;
    const columns = nodeColumns(["labels"], false, "shoal node --help");
    expect(renderRows(columns, [node], { ...plain, format: "table", header: false }).split(/ {2,}/)).toEqual([
      "n-617ba839",
      "Compute",
      "APPROVED",
      "HEALTHY",
      "ineligible",
      "zone=a",
      "draining until 2026-11-30 06:30:00",
    ]);
    expect(renderRows(columns, [node], { ...plain, format: "csv", header: false })).toBe(
      "n-617ba839-9c21-4c7d-9cc2-b8359f8e4d5c,Compute,APPROVED,HEALTHY,ineligible,zone=a," +
        "draining until 2026-11-30T01:00:00.000Z",
    );
  });
});
