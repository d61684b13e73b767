import type { KurrentDBClient } from "@kurrent/kurrentdb-client";
import { StartupError } from "../../errors/startup-error.ts";

/**
 * The oldest server Shoal runs on. Servers before 22.x put commit position 2^64−1 on the events
 * of a stream read (Shoal keeps every event's position), and filtered reads of $all need 21.10.
 */
export const MIN_SERVER_VERSION = "22.10";

/** What the client learned from the server's ServerFeatures service on connecting ("unknown" when it has none). */
interface ServerCapabilities {
  readonly serverVersion: string;
}

/**
 * The client asks ServerFeatures.GetSupportedMethods once per connection, over its own channel
 * (TLS, credentials, node preference), and keeps the answer as `capabilities`; its typings do not
 * declare that getter, so it is read here through a checked shape rather than asked a second time.
 */
function capabilitiesOf(client: KurrentDBClient): Promise<ServerCapabilities> {
  const capabilities = (client as unknown as { readonly capabilities?: Promise<ServerCapabilities> }).capabilities;
  if (capabilities === undefined || typeof capabilities.then !== "function") {
    throw new Error("this @kurrent/kurrentdb-client does not report the server's version (no capabilities)");
  }
  return capabilities;
}

/** [major, minor] of "24.10.4", undefined for "unknown" or anything else that is not a version. */
export function versionParts(version: string): readonly [number, number] | undefined {
  const match = /^(\d+)\.(\d+)(?:\.|$)/.exec(version);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/** Why a server of this version is refused, or undefined when it is supported. */
export function unsupportedVersion(version: string): string | undefined {
  const parts = versionParts(version);
  const [minMajor, minMinor] = versionParts(MIN_SERVER_VERSION)!;
  const supported = parts !== undefined && (parts[0] > minMajor || (parts[0] === minMajor && parts[1] >= minMinor));
  if (supported) return undefined;
  const what = parts === undefined ? "a server that does not report its version (before 21.10)" : `server ${version}`;
  return `KurrentDB ${MIN_SERVER_VERSION} or later is required; EventStore.URL points at ${what}. Upgrade the server`;
}

/** Fails with a clear message when the server is older than MIN_SERVER_VERSION; returns its version. */
export async function checkServerVersion(client: KurrentDBClient): Promise<string> {
  const { serverVersion } = await capabilitiesOf(client);
  const refusal = unsupportedVersion(serverVersion);
  if (refusal !== undefined) throw new StartupError(refusal);
  return serverVersion;
}
