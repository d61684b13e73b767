import { API_OPTIONS, API_TLS_HELP } from "./api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "./config-flags.ts";

/** The options every `shoal job …` and `shoal docker run` command takes. */
export const JOB_COMMON_OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  output: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export const API_OPTIONS_HELP = `API options (as for \`shoal node\`):
  --api-host HOST          API host (env SHOAL_API_HOST; default 127.0.0.1)
  --api-port PORT          API port (env SHOAL_API_PORT; default 1234)
  --api-key KEY            API key (env SHOAL_API_KEY)
  --username USER          Basic auth user (env SHOAL_API_USERNAME); with --password (env SHOAL_API_PASSWORD)
                           Without these: this machine's \`serve\`/\`devstack\` admin key, sent only to this machine
${API_TLS_HELP}
  -c Key=Value, --config FILE   config (API.Host, API.Port, DataDir, …)`;
