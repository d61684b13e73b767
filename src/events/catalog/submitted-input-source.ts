import { Schema } from "effect";
import { quote } from "../../../machines/job/spec-fields.ts";
import { INPUT_SOURCE_LIMITS, INPUT_SOURCE_TYPES, type InputSource, type InputSourceType } from "./input-source.ts";
import {
  BeforeChecks,
  Checks,
  MissingMessage,
  ShapeMessage,
  WarnsUnknownFields,
  field,
  isAbsent,
  isObject,
  type Check,
  type Obj,
} from "./walk-schema.ts";

/**
 * A task's InputSources as a client submits them (Bacalhau's []*models.InputSource): what each
 * may be, and Bacalhau's rules between them (ValidateSubmission, validateInputSources), with
 * what a node could only find out later said at once: a storage type this build reads, its
 * params (an absolute SourcePath; an http or https URL ending with a file name), an absolute Target.
 */

const L = INPUT_SOURCE_LIMITS;
const TYPES = INPUT_SOURCE_TYPES.join(", ");
const Text = Schema.String.annotations({ message: () => "must be a string" });
const Others = Schema.Record({ key: Schema.String, value: Schema.Unknown });
const checks = (...list: Check[]) => ({ [Checks]: list });

/** A type as Bacalhau's SpecConfig.IsType compares it: trimmed, in any case. */
export function inputSourceType(type: string): InputSourceType | undefined {
  const wanted = type.trim().toLowerCase();
  return INPUT_SOURCE_TYPES.find((t) => t.toLowerCase() === wanted);
}

/** An absolute path with no `.`, `..` or empty parts: what a node matches its allow-list against and Docker mounts. */
export function absolutePathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) return "must be an absolute path (starting with /)";
  if (path === "/") return undefined;
  const parts = path.slice(1).split("/");
  if (parts.some((p) => p === "" || p === "." || p === ".."))
    return "must be an absolute path without '.', '..' or empty parts (nor a trailing /)";
  if (path.includes("\u0000")) return "cannot contain a null character";
  return undefined;
}

/** Bacalhau's urldownload.IsURLSupported, its messages; the URL as a node fetches it, or the problem. */
export function supportedUrl(raw: string): { url: string } | { problem: string } {
  const text = raw.replace(/^[ '"]+|[ '"]+$/g, "");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: `invalid URL: ${quote(text)}` };
  }
  const scheme = url.protocol.replace(/:$/, "");
  if (scheme !== "http" && scheme !== "https")
    return { problem: `URLs must begin with 'http' or 'https'. The submitted one began with ${scheme}` };
  if (url.pathname === "" || url.pathname.endsWith("/")) return { problem: "URL must end with a file name" };
  return { url: text };
}

const supportedType: Check = (type, at, f) => {
  if (inputSourceType(type as string) === undefined)
    f.problem(at.path, `input source type ${quote(type as string)} is not supported: Shoal reads ${TYPES}`);
};

const pathRules =
  (what: string): Check =>
  (path, at, f) => {
    const p = path as string;
    const problem = absolutePathProblem(p);
    if (problem !== undefined) f.problem(at.path, `${what} ${quote(p)} ${problem}`);
    else if (p === "/" && what === "target") f.problem(at.path, "target cannot be / (the container's root)");
    else if (p.length > L.pathLength)
      f.problem(at.path, `${what} is ${p.length} characters; the limit is ${L.pathLength}`);
  };

/** Bacalhau's local.DecodeSpec reads "true" as true; anything else that is not a boolean is refused here. */
function readWriteOf(v: unknown): boolean | undefined {
  if (isAbsent(v) || v === false || v === "false" || v === "") return false;
  if (v === true || v === "true") return true;
  return undefined;
}

/** The params each type takes, read from the submitted Params (names in any case, as Go's mapstructure reads them). */
const typeParams: Check = (source, at, f) => {
  const read = source as Obj;
  const type = typeof read.Type === "string" ? inputSourceType(read.Type) : undefined;
  if (type === undefined) return;
  const params = isObject(read.Params) ? read.Params : {};
  const at_ = (name: string) => `${at.path}.Params.${name}`;
  if (type === "localDirectory") {
    const path = field(params, "SourcePath");
    if (typeof path !== "string" || path.trim() === "")
      f.problem(at_("SourcePath"), "localDirectory needs SourcePath: an absolute path on the compute node");
    else pathRules("source path")(path, { ...at, path: at_("SourcePath") }, f, () => {});
    if (readWriteOf(field(params, "ReadWrite")) === undefined) f.problem(at_("ReadWrite"), "must be true or false");
    const createAs = field(params, "CreateAs");
    if (!isAbsent(createAs) && createAs !== "" && createAs !== "noCreate")
      f.problem(at_("CreateAs"), "is not supported by Shoal: the path must already exist on the compute node");
    return;
  }
  const url = field(params, "URL");
  if (typeof url !== "string" || url.trim() === "") {
    f.problem(at_("URL"), "urlDownload needs URL: an http or https URL ending with a file name");
    return;
  }
  const checked = supportedUrl(url);
  if ("problem" in checked) f.problem(at_("URL"), checked.problem);
  else if (checked.url.length > L.urlLength)
    f.problem(at_("URL"), `the URL is ${checked.url.length} characters; the limit is ${L.urlLength}`);
};

/** Bacalhau's validateInputSources: aliases and targets each once (the first repeat named). */
const uniqueAliasesAndTargets: Check = (list, at, f) => {
  const aliases = new Set<string>();
  const targets = new Set<string>();
  (list as readonly Obj[]).forEach((input, i) => {
    const alias = typeof input.Alias === "string" ? input.Alias.trim() : "";
    const target = typeof input.Target === "string" ? input.Target.trim() : "";
    if (alias !== "" && aliases.has(alias))
      f.problem(`${at.path}[${i}].Alias`, `input source with alias '${alias}' already exists`);
    if (target !== "" && targets.has(target))
      f.problem(`${at.path}[${i}].Target`, `input source with target '${target}' already exists`);
    if (alias !== "") aliases.add(alias);
    if (target !== "") targets.add(target);
  });
};

const atMost: Check = (list, at, f) => {
  const n = (list as readonly unknown[]).length;
  if (n > L.items) f.problem(at.path, `${n} input sources; the limit is ${L.items}`);
};

export const SubmittedInputSource = Schema.Struct(
  {
    Source: Schema.Struct(
      {
        Type: Text.annotations({
          description: TYPES,
          [MissingMessage]: () => "invalid input source: missing spec type",
          ...checks(supportedType),
        }),
        Params: Schema.optional(
          Others.annotations({
            description: "localDirectory: SourcePath, ReadWrite; urlDownload: URL",
            [ShapeMessage]: "must be a map of params",
          }),
        ),
      },
      Others,
    ).annotations({
      [ShapeMessage]: "must be a storage spec (Type, Params)",
      [MissingMessage]: () => "invalid input source: nil spec config",
      [WarnsUnknownFields]: [],
      ...checks(typeParams),
    }),
    Alias: Schema.optional(
      Text.pipe(Schema.maxLength(L.aliasLength, { message: () => `must be at most ${L.aliasLength} characters` })),
    ),
    Target: Text.annotations({
      description: "an absolute path in the container",
      [MissingMessage]: () => "input source is missing a target",
      ...checks(pathRules("target")),
    }),
  },
  Others,
).annotations({ [ShapeMessage]: "must be an input source (Source, Target, Alias)", [WarnsUnknownFields]: [] });

export const SubmittedInputSources = Schema.Array(SubmittedInputSource).annotations({
  description: `data mounted into the container: ${TYPES}`,
  [ShapeMessage]: "must be a list of input sources",
  [BeforeChecks]: [atMost],
  ...checks(uniqueAliasesAndTargets),
});

/**
 * The inputs Shoal stores, from submitted ones as read (Bacalhau's Normalize: each type's params in their one form).
 * What could not be read is left out: such a submission has problems and is never stored.
 */
export function storedInputSources(read: readonly Obj[]): InputSource[] {
  const stored: InputSource[] = [];
  for (const input of read) {
    const source = isObject(input.Source) ? input.Source : {};
    const type = typeof source.Type === "string" ? inputSourceType(source.Type) : undefined;
    if (type === undefined || typeof input.Target !== "string") continue;
    const params = isObject(source.Params) ? source.Params : {};
    const url = supportedUrl(String(field(params, "URL") ?? ""));
    const Params =
      type === "localDirectory"
        ? { SourcePath: String(field(params, "SourcePath") ?? ""), ReadWrite: readWriteOf(field(params, "ReadWrite")) }
        : { URL: "url" in url ? url.url : "" };
    stored.push({
      Source: { Type: type, Params },
      Alias: typeof input.Alias === "string" ? input.Alias.trim() : "",
      Target: input.Target.trim(),
    });
  }
  return stored;
}
