import { loadTracedConfig, type TracedConfig } from "../config/load-config.ts";
import type { ShoalConfig } from "../config/keys.ts";

/** Options every command that reads config accepts. */
export const CONFIG_OPTIONS = {
  c: { type: "string", multiple: true, short: "c" },
  config: { type: "string", multiple: true },
} as const;

/** The effective config with its origins; Bacalhau's keys Shoal ignores are named on stderr, before any logger. */
export function tracedConfigFrom(
  values: { c?: string[]; config?: string[] },
  flags: Partial<ShoalConfig> = {},
): TracedConfig {
  const traced = loadTracedConfig({ files: values.config ?? [], settings: values.c ?? [], env: process.env, flags });
  for (const warning of traced.warnings) process.stderr.write(`Config warning: ${warning}\n`);
  return traced;
}

export function configFrom(values: { c?: string[]; config?: string[] }, flags: Partial<ShoalConfig> = {}): ShoalConfig {
  return tracedConfigFrom(values, flags).config;
}
