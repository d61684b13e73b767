import type { OptionSpec, SharedGroup } from "./command-spec.ts";

/** The API connection options every command that talks to the orchestrator takes. */
export const API_OPTION_SPECS: readonly OptionSpec[] = [
  {
    name: "api-host",
    arg: "HOST",
    description: "API host (env SHOAL_API_HOST; default 127.0.0.1); https://… talks TLS",
  },
  { name: "api-port", arg: "PORT", description: "API port (env SHOAL_API_PORT; default 1234)" },
  {
    name: "api-key",
    arg: "KEY",
    description: "API key (env SHOAL_API_KEY); refused with --username/--password",
  },
  { name: "username", arg: "USER", description: "Basic auth user (env SHOAL_API_USERNAME), with --password" },
  {
    name: "password",
    arg: "PASSWORD",
    description:
      "Basic auth password (env SHOAL_API_PASSWORD)\n" +
      "flags before the environment; there, SHOAL_API_KEY wins over SHOAL_API_USERNAME/PASSWORD\n" +
      "without a key or user: this machine's serve or devstack admin key, sent only to this machine",
  },
  { name: "api-tls", description: "talk HTTPS (the default, unless API.TLS.Disable is set)" },
  {
    name: "api-tls-ca-cert",
    arg: "FILE",
    description: "trust the CA in FILE (env SHOAL_API_TLS_CACERT; also --ca-cert)",
  },
  { name: "insecure", description: "do not check the API's certificate (also --api-tls-insecure); prints a warning" },
];

export const CONFIG_OPTION_SPECS: readonly OptionSpec[] = [
  { name: "c", short: "c", arg: "Key=Value", description: "set a config key (repeatable); -c file.yaml loads a file" },
  { name: "config", arg: "FILE", description: "load a YAML config file (repeatable; later files win)" },
];

export const SHARED_GROUPS: Readonly<Record<SharedGroup, { title: string; options: readonly OptionSpec[] }>> = {
  api: { title: "API options", options: API_OPTION_SPECS },
  config: { title: "Config options", options: CONFIG_OPTION_SPECS },
};

/** -o/--output with a command's formats (`short` false: --output alone); lists add Bacalhau's table flags. */
export function outputOptionSpecs(formats: readonly string[], description: string, short = true): OptionSpec[] {
  const output: OptionSpec = {
    name: "output",
    ...(short ? { short: "o" } : {}),
    arg: "FORMAT",
    description,
    choices: formats,
  };
  if (!formats.includes("wide")) return [output];
  return [
    output,
    { name: "wide", description: "the same as -o wide (with -o csv: the wide columns too)" },
    { name: "no-style", description: "a plain table: no borders, no bold (always so when stdout is not a terminal)" },
    { name: "hide-header", description: "no header row (table and csv)" },
  ];
}

export const LIST_FORMAT_CHOICES = ["table", "wide", "json", "yaml", "csv"] as const;
export const PLAIN_FORMAT_CHOICES = ["table", "json", "yaml"] as const;
