import { loadConfig } from "../config/load-config.ts";
import type { ShoalConfig } from "../config/keys.ts";

/** Options every command that reads config accepts. */
export const CONFIG_OPTIONS = {
  c: { type: "string", multiple: true, short: "c" },
  config: { type: "string", multiple: true },
} as const;

export function configFrom(values: { c?: string[]; config?: string[] }, flags: Partial<ShoalConfig> = {}): ShoalConfig {
  return loadConfig({ files: values.config ?? [], settings: values.c ?? [], env: process.env, flags });
}
