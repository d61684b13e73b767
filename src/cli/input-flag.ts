import { posix } from "node:path";
import { GO_FALSE, GO_TRUE } from "../api/query-bool.ts";
import { absolutePathProblem, supportedUrl } from "../events/catalog/submitted-input-source.ts";
import { csvFields } from "./csv-fields.ts";
import { UsageError } from "./usage-error.ts";

/** A task's input as the spec takes it (Bacalhau's models.InputSource). */
export interface InputFlagSource {
  readonly Source: { readonly Type: string; readonly Params: Record<string, unknown> };
  readonly Alias: string;
  readonly Target: string;
}

/** Where an input is mounted when the flag names no destination (Bacalhau's default). */
const DEFAULT_TARGET = "/inputs";
const SUPPORTED = "file:// (localDirectory) and http:// or https:// (urlDownload)";
/** Go's strconv.ParseBool, as Bacalhau reads opt=rw. */
const BOOLEANS: Readonly<Record<string, boolean>> = Object.fromEntries([
  ...GO_TRUE.map((t) => [t, true]),
  ...GO_FALSE.map((t) => [t, false]),
]);

/** A URI's scheme with its colon and the slashes of an authority, if any (RFC 3986). */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(\/\/)?/;
const schemeOf = (uri: string): string => SCHEME.exec(uri)?.[1]?.toLowerCase() ?? "";

/**
 * Bacalhau's `-i/--input` (cmd/util/opts ParseStorageSpec): `URI[:DEST]` or `src=URI,dst=DEST[,opt=KEY=VALUE]…`, the
 * destination /inputs by default, the alias the source URI. Shoal's storage types only: file:// mounts a directory of
 * the compute node (opt=rw=true: read-write), http:// and https:// download a file. The split of `URI:DEST` is taken
 * only where what follows the last colon is an absolute path, so a URL with a port and no destination stays whole.
 * Paths and URLs are checked as the server checks them, so a bad flag is a usage error before any request.
 */
export function inputFlag(text: string, help: string): InputFlagSource {
  function fail(why: string): never {
    throw new UsageError(`--input ${JSON.stringify(text)}: ${why}`, help);
  }
  let source = "";
  let target = DEFAULT_TARGET;
  const options = new Map<string, string>();
  csvFields(text).forEach((field, i) => {
    const eq = field.indexOf("=");
    if (eq < 0) {
      if (i > 0) fail(`invalid storage option ${JSON.stringify(field)}: must be a key=value pair`);
      const prefix = SCHEME.exec(field)?.[0] ?? "";
      const colon = field.lastIndexOf(":");
      if (colon >= prefix.length && field[colon + 1] === "/") {
        source = field.slice(0, colon);
        target = field.slice(colon + 1);
      } else source = field;
      return;
    }
    const key = field.slice(0, eq).toLowerCase();
    const value = field.slice(eq + 1);
    if (key === "source" || key === "src") source = value;
    else if (key === "target" || key === "dst" || key === "destination") target = value;
    else if (key === "opt" || key === "option") {
      const [k = "", ...v] = value.split("=");
      if (k !== "") options.set(k, v.join("="));
    } else fail(`unexpected key ${JSON.stringify(key)}: use src, dst or opt`);
  });
  const unquote = (s: string) => s.replace(/^[ '"]+|[ '"]+$/g, "");
  source = unquote(source);
  target = unquote(target);
  if (source === "") fail("no source URI");
  const targetProblem = target === "/" ? "cannot be / (the container's root)" : absolutePathProblem(target);
  if (targetProblem !== undefined) fail(`the destination ${JSON.stringify(target)} ${targetProblem}`);
  const scheme = schemeOf(source);
  const unknownOption = (allowed: string) => {
    for (const key of options.keys()) fail(`unknown option ${JSON.stringify(key)} for ${scheme}:// (${allowed})`);
  };
  if (scheme === "file") {
    let readWrite = false;
    for (const [key, value] of options) {
      if (!["rw", "read-write", "read_write", "readwrite"].includes(key)) continue;
      const parsed = BOOLEANS[value];
      if (parsed === undefined) fail(`opt=${key} takes true or false, got ${JSON.stringify(value)}`);
      readWrite = parsed;
      options.delete(key);
    }
    unknownOption("it takes rw");
    const url = /^file:\/\/([^/]*)(.*)$/i.exec(source);
    const joined = posix.normalize(posix.join(url?.[1] ?? "", url?.[2] ?? source.slice("file:".length)));
    const path = joined.length > 1 ? joined.replace(/\/$/, "") : joined;
    const problem = absolutePathProblem(path);
    if (problem !== undefined) fail(`the source path ${JSON.stringify(path)} ${problem} (file:///PATH)`);
    return {
      Source: { Type: "localDirectory", Params: { SourcePath: path, ReadWrite: readWrite } },
      Alias: source,
      Target: target,
    };
  }
  if (scheme === "http" || scheme === "https") {
    unknownOption("it takes none");
    const checked = supportedUrl(source);
    if ("problem" in checked) fail(checked.problem);
    return { Source: { Type: "urlDownload", Params: { URL: source } }, Alias: source, Target: target };
  }
  return fail(
    scheme === ""
      ? `the source has no scheme: Shoal reads ${SUPPORTED}`
      : `storage ${JSON.stringify(`${scheme}://`)} is not supported: Shoal reads ${SUPPORTED}`,
  );
}
