import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/fixtures.ts";
import { runShoal } from "../support/shoal-process.ts";

/**
 * A job file that is a template, as `bin/shoal` reads it with no server: `job validate` renders it with the flags
 * `job run` takes, and both refuse a -V with an empty key before anything else.
 */
const dir = tempDir("shoal-template-cli-");
const file = join(dir, "job.yaml");
writeFileSync(
  file,
  "Type: batch\nTasks:\n  - Name: main\n    Engine:\n      Type: docker\n      Params:\n        Image: {{ .image }}\n",
);

describe("a job file that is a template", () => {
  it("job validate renders it with -V (and -E), as job run does; a name without a value: invalid (1)", async () => {
    const ok = await runShoal(["job", "validate", file, "-V", "image=busybox:1.36"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe("OK\n");

    const fromEnv = await runShoal(["job", "validate", file, "-E", "^image$"], { image: "busybox:1.36" });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);

    const missing = await runShoal(["job", "validate", file]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('map has no entry for key "image" (give it with -V image=VALUE)');

    // As written, `{{ .image }}` is YAML's flow mapping with a key of its own: not a job's Image.
    const asWritten = await runShoal(["job", "validate", file, "--no-template"]);
    expect(asWritten.code).toBe(1);
  });

  it("-V with an empty key is a usage error (2) for job run and job validate, nothing submitted", async () => {
    // An API where none listens: were the job sent, job run would fail otherwise.
    for (const command of [["run", "--api-port", "9"], ["validate"]]) {
      const got = await runShoal(["job", command[0]!, file, "-V", "=x", ...command.slice(1)]);
      expect(got.code, `${command}: ${got.stderr}`).toBe(2);
      expect(got.stderr).toContain('invalid argument "=x" for -V/--template-vars: =x has no key');
    }
  });
});
