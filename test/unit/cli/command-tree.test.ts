import { describe, expect, it } from "vitest";
import { COMMAND_TREE } from "../../../src/cli/help/command-tree.ts";
import { allOptions, commandLine, everyCommand } from "../../../src/cli/help/find-command.ts";

interface Option {
  readonly type: string;
  readonly short?: string;
}
type Table = Readonly<Record<string, Option>>;

const commands = "../../../src/cli/commands";
const table = (load: () => Promise<{ OPTIONS: Table }>) => async () => (await load()).OPTIONS;

/** Each command's parseArgs table, by the command line whose spec describes it. */
const TABLES: Readonly<Record<string, () => Promise<Table>>> = {
  serve: table(() => import(`${commands}/serve-command.ts`)),
  compute: table(() => import(`${commands}/compute-command.ts`)),
  devstack: table(() => import(`${commands}/devstack-command.ts`)),
  node: table(() => import(`${commands}/node-command.ts`)),
  "job run": table(() => import(`${commands}/job-run-command.ts`)),
  "job list": table(() => import(`${commands}/job-list-command.ts`)),
  "job describe": table(() => import(`${commands}/job-describe-command.ts`)),
  "job executions": table(() => import(`${commands}/job-executions-command.ts`)),
  "job history": table(() => import(`${commands}/job-history-command.ts`)),
  "job stop": table(() => import(`${commands}/job-stop-command.ts`)),
  "job logs": table(() => import(`${commands}/job-logs-command.ts`)),
  "job versions": table(() => import(`${commands}/job-versions-command.ts`)),
  "job rerun": table(() => import(`${commands}/job-rerun-command.ts`)),
  "job validate": table(() => import(`${commands}/job-validate-command.ts`)),
  "job get": table(() => import(`${commands}/job-get-command.ts`)),
  events: table(() => import(`${commands}/events-command.ts`)),
  "audit diff": table(() => import(`${commands}/audit-diff-command.ts`)),
  "audit verify": table(() => import(`${commands}/audit-verify-command.ts`)),
  "audit membership": table(() => import(`${commands}/audit-membership-command.ts`)),
  "docker run": table(() => import(`${commands}/docker-run-command.ts`)),
  sim: table(() => import(`${commands}/sim-command.ts`)),
  "leaf config": table(() => import(`${commands}/leaf-command.ts`)),
  "leaf revoke": table(() => import(`${commands}/leaf-revoke-command.ts`)),
  "nats-operator": table(() => import(`${commands}/nats-operator-command.ts`)),
  "tls issue": table(() => import(`${commands}/tls-command.ts`)),
  agent: table(() => import(`${commands}/agent-command.ts`)),
  "config list": table(() => import(`${commands}/config-command.ts`)),
  version: table(() => import(`${commands}/version-command.ts`)),
};

/** Other spellings a command accepts that its help names in a description rather than as options of their own. */
const ALIASES = new Set(["ca-cert", "api-tls-insecure", "constraint", "wait-timeout-secs", "reverse"]);

/** Commands main.ts answers itself. */
const BUILT_IN = new Set(["completion", "help"]);

const leaves = everyCommand(COMMAND_TREE).filter((path) => path.length > 1 && !path.at(-1)!.subcommands?.length);

/** The table of a leaf: its own, or its group's (node's subcommands share one). */
const tableKey = (line: string): string | undefined =>
  Object.hasOwn(TABLES, line) ? line : Object.hasOwn(TABLES, line.split(" ")[0]!) ? line.split(" ")[0] : undefined;

describe("the command tree describes the options the commands parse", () => {
  it.each(leaves.map((path) => [commandLine(path.slice(1)), path] as const))(
    "shoal %s: every option of its help is one it takes, of the same kind",
    async (line, path) => {
      if (BUILT_IN.has(line)) return;
      const key = tableKey(line);
      expect(key, `${line} has no table in this test`).toBeDefined();
      const options = await TABLES[key!]!();
      for (const option of allOptions(path.at(-1)!)) {
        // --wait[=true|false] is read before parseArgs (takeBooleanFlag).
        if (option.arg?.startsWith("[")) continue;
        const parsed = options[option.name];
        expect(parsed, `${line} --${option.name}`).toBeDefined();
        expect(parsed!.type, `${line} --${option.name}`).toBe(option.arg === undefined ? "boolean" : "string");
        expect(parsed!.short, `${line} --${option.name}`).toBe(option.short);
      }
    },
  );

  it.each(Object.keys(TABLES))("shoal %s: every option it takes is in its help", async (key) => {
    const described = new Set(
      leaves
        .filter((path) => tableKey(commandLine(path.slice(1))) === key)
        .flatMap((path) => allOptions(path.at(-1)!).map((o) => o.name)),
    );
    const missing = Object.keys(await TABLES[key]!()).filter((name) => !described.has(name) && !ALIASES.has(name));
    expect(missing).toEqual([]);
  });
});
