import { join } from "node:path";
import { parseArgs } from "node:util";
import { createLogger } from "../../logging/create-logger.ts";
import { startOrchestrator } from "../../orchestrator/orchestrator.ts";
import { redactUrl } from "../../security/redact-url.ts";
import { CONFIG_OPTIONS, configFrom } from "../config-flags.ts";
import { UsageError } from "../usage-error.ts";
import { computeAgentFromConfig } from "./compute-command.ts";
import { TOUR_IMAGE, prepareDockerForDevstack } from "./devstack-docker.ts";
import {
  adminKeyLine,
  apiCaLine,
  joinInstructions,
  natsCliFlags,
  reloadTlsOnHangUp,
  waitForSignal,
} from "./serve-command.ts";
import { commandHelp } from "../help/command-help.ts";

/** Its options, which its spec in help/command-tree.ts describes (test/unit/cli/command-tree.test.ts). */
export const OPTIONS = {
  ...CONFIG_OPTIONS,
  compute: { type: "string", default: "3" },
  help: { type: "boolean", short: "h" },
} as const;

export async function devstackCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: OPTIONS,
    strict: true,
  });
  if (values.help) {
    console.log(commandHelp("shoal devstack"));
    return 0;
  }
  const count = Number(values.compute);
  if (!Number.isInteger(count) || count < 0 || count > 100)
    throw new UsageError(`--compute must be a whole number from 0 to 100, got ${values.compute}`);
  const base = configFrom(values);
  const config = { ...base, NodeID: base.NodeID || "node-0", DataDir: join(base.DataDir, "devstack") };
  const logger = createLogger({ level: config["Logging.Level"], mode: config["Logging.Mode"] });
  const signalled = waitForSignal(); // before anything starts, as serve does
  const docker = await prepareDockerForDevstack((line) => console.log(line));
  const orchestrator = await startOrchestrator(config, logger.child({ node: config.NodeID }), {
    command: "shoal devstack",
  });
  reloadTlsOnHangUp(orchestrator, logger);
  const agents = [];
  const computeConfig = {
    ...config,
    "Compute.Orchestrators": [orchestrator.natsUrl],
    "Compute.Auth.Token": orchestrator.joinToken.token,
  };
  for (let i = 1; i <= count; i++) {
    const nodeId = `node-${i}`;
    const agent = computeAgentFromConfig(
      { ...computeConfig, DataDir: join(config.DataDir, "compute", nodeId) },
      nodeId,
      logger.child({ node: nodeId }),
      [config.DataDir],
    );
    await agent.start();
    agents.push(agent);
  }
  const port = new URL(orchestrator.apiUrl).port;
  const eventsCreds = orchestrator.eventsReader?.credsFile ?? "<file>";
  const natsSub =
    `  nats sub 'shoal.events.>' -s ${redactUrl(orchestrator.natsUrl)} ${natsCliFlags(orchestrator, eventsCreds)}` +
    "     # cluster events, with the nats CLI";
  console.log(`Shoal devstack is running: orchestrator ${orchestrator.nodeId} and ${count} compute node(s).

  API:   ${orchestrator.apiUrl}
  NATS:  ${redactUrl(orchestrator.natsUrl)}
  Data:  ${config.DataDir}
${orchestrator.apiCaFile ? `${apiCaLine(orchestrator.apiCaFile, "  ")}\n` : ""}${orchestrator.adminKey ? `${adminKeyLine(orchestrator.adminKey, "  ")}\n` : ""}
${docker.lines.join("\n")}

Try, in another terminal (${orchestrator.adminKey ? "the CLI finds the admin key under SHOAL_DATADIR by itself" : "add --api-key or --username/--password of an API.Auth.Users entry"}):
  export SHOAL_API_HOST=127.0.0.1 SHOAL_API_PORT=${port} SHOAL_DATADIR=${base.DataDir}
  ./bin/shoal node list
  ./bin/shoal node reject node-1 -m "not ours"
  ./bin/shoal node approve node-1
  ./bin/shoal node history node-1
${docker.ready ? `${jobTry(orchestrator.apiUrl, orchestrator.adminKey?.path, orchestrator.apiCaFile)}\n` : ""}${natsSub}
${joinInstructions(orchestrator)}

Press Ctrl-C to stop.`);
  await signalled;
  for (const agent of agents) await agent.stop();
  await orchestrator.stop();
  return 0;
}

/** The README's job step, for this devstack's port and key. */
function jobTry(apiUrl: string, adminKeyFile: string | undefined, caFile: string | undefined): string {
  const job = {
    Job: {
      Type: "batch",
      Tasks: [
        {
          Name: "hello",
          Engine: {
            Type: "docker",
            Params: { Image: TOUR_IMAGE, Entrypoint: ["echo"], Parameters: ["hello from Shoal"] },
          },
        },
      ],
    },
  };
  const jobs = `${caFile ? `--cacert ${caFile} ` : ""}${apiUrl}/api/v1/orchestrator/jobs`;
  return [
    `  KEY=${adminKeyFile ? `$(cat ${adminKeyFile})` : "<an API key with write:job>"}     # a container job:`,
    `  curl -s -X PUT -H "Authorization: Bearer $KEY" -H 'content-type: application/json' ${jobs} -d '${JSON.stringify(job)}'`,
    `  curl -s -H "Authorization: Bearer $KEY" ${jobs}/<JobID>/executions`,
  ].join("\n");
}
