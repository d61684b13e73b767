import { useRef, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { jobWrapperKey, unwrapJob } from "../../../src/cli/unwrap-job.ts";
import { ApiError } from "../api/client.ts";
import { submitJob } from "../api/job-endpoints.ts";
import type { SpecProblem } from "../api/types.ts";
import { ErrorAlert, errorText } from "../common/format.tsx";
import { useSession } from "../session/session.tsx";
import { jobHref } from "./jobs-page.tsx";
import type { SpecPosition } from "./spec-positions.ts";

/** A problem of the refused spec, with where its field is in the text when it could be found. */
interface PlacedProblem extends SpecProblem {
  readonly at?: SpecPosition;
}

/**
 * Each problem's line in the text (the YAML parser, loaded only for a refused spec, keeps source positions); `under`:
 * the key the text holds the job under, if it wraps it.
 */
async function place(text: string, problems: readonly SpecProblem[], under?: string): Promise<PlacedProblem[]> {
  const { specPositions } = await import("./spec-positions.ts");
  const positions = specPositions(
    text,
    problems.map((p) => (under === undefined ? p.path : p.path === "" ? under : `${under}.${p.path}`)),
  );
  return problems.map((p, i) => {
    const at = positions[i];
    return at === undefined ? p : { ...p, at };
  });
}

const EXAMPLE = `Name: hello
Type: batch
Count: 1
Tasks:
  - Name: main
    Engine:
      Type: docker
      Params:
        Image: busybox:1.36
        Entrypoint: [sh, -c]
        Parameters: ["echo hello from Shoal"]
    Resources:
      CPU: 100m
      Memory: 64Mb
`;

/**
 * The job as the text says it: JSON when it is JSON, else YAML (loaded only then, so the console's first page does
 * not carry a YAML parser).
 */
async function parseSpec(text: string): Promise<unknown> {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return JSON.parse(trimmed) as unknown;
  const { parse } = await import("yaml");
  return parse(text) as unknown;
}

/** The 400's Details.problems: every problem of the spec with its field path. */
function problemsOf(e: unknown): readonly SpecProblem[] {
  if (!(e instanceof ApiError) || e.status !== 400) return [];
  const problems = e.details?.["problems"];
  return Array.isArray(problems) ? (problems as SpecProblem[]) : [];
}

/** Submits a job written in YAML or JSON (Bacalhau's job spec); a refused spec lists each field and its problem. */
export function SubmitJobPage() {
  const session = useSession();
  const { route } = useLocation();
  const [text, setText] = useState(EXAMPLE);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [problems, setProblems] = useState<readonly PlacedProblem[]>([]);
  const editor = useRef<HTMLTextAreaElement>(null);

  if (!session.can("write:job"))
    return (
      <main>
        <h1>Submit a job</h1>
        <p>Submitting a job needs the write:job capability.</p>
      </main>
    );

  const submit = async () => {
    setBusy(true);
    setError(undefined);
    setProblems([]);
    let under: string | undefined;
    try {
      let document: unknown;
      try {
        document = await parseSpec(text);
      } catch (e) {
        setError(`The text is neither JSON nor YAML: ${errorText(e)}`);
        return;
      }
      // A job under a Job key (as `shoal job run` reads it): the job is submitted, its problems placed under the key.
      under = jobWrapperKey(document);
      const res = await submitJob(session.client, unwrapJob(document));
      route(jobHref(res.JobID));
    } catch (e) {
      const found = problemsOf(e);
      setProblems(found.length === 0 ? [] : await place(text, found, under));
      setError(found.length > 0 ? "The job was refused; nothing was stored:" : errorText(e));
    } finally {
      setBusy(false);
    }
  };

  /** Puts the caret at the start of the line (selecting it) and scrolls the text there. */
  const goTo = (at: SpecPosition) => {
    const area = editor.current;
    if (area === null) return;
    const end = area.value.indexOf("\n", at.lineStart);
    area.focus();
    area.setSelectionRange(at.lineStart, end === -1 ? area.value.length : end);
    const lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 18;
    area.scrollTop = Math.max(0, (at.line - 3) * lineHeight);
  };

  return (
    <main>
      <p class="crumbs">
        <a href="/ui/jobs">Jobs</a> /
      </p>
      <h1>Submit a job</h1>
      <form
        class="submit-job"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label for="job-spec">Job spec (YAML or JSON, as Bacalhau's job files)</label>
        <textarea
          ref={editor}
          id="job-spec"
          rows={20}
          spellcheck={false}
          value={text}
          aria-invalid={problems.length > 0}
          aria-describedby="job-problems"
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <div id="job-problems">
          <ErrorAlert message={error} />
          {problems.length === 0 ? null : (
            <ul class="problems" aria-label="Problems">
              {problems.map((p, i) => (
                <li key={i}>
                  <code class="field">{p.path || "(the job)"}</code>: {p.message}{" "}
                  {p.at === undefined ? null : (
                    <button
                      type="button"
                      class="link line"
                      title={p.at.exact ? undefined : "the field is not in the text: the line of the field around it"}
                      onClick={() => p.at !== undefined && goTo(p.at)}
                    >
                      line {p.at.line}
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )}
        </div>
        <button type="submit" disabled={busy}>
          Submit
        </button>
      </form>
    </main>
  );
}
