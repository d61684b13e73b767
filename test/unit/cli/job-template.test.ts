import { describe, expect, it } from "vitest";
import { TemplateError, renderTemplate, templateEnv, templateVars } from "../../../src/cli/job-template.ts";

describe("renderTemplate (Bacalhau's job templates, the subset Shoal renders)", () => {
  it("replaces {{.name}} and {{ .name }} with the values, leaving the rest as written", () => {
    const text = "Name: {{.name}}\nTasks:\n  - Image: {{ .image }}:{{.tag}}\n    Env: {a: b}\n";
    expect(renderTemplate(text, { name: "nightly", image: "busybox", tag: "1.36" })).toBe(
      "Name: nightly\nTasks:\n  - Image: busybox:1.36\n    Env: {a: b}\n",
    );
    expect(renderTemplate("no actions: { } }} {", {})).toBe("no actions: { } }} {");
    expect(renderTemplate("{{.Ünïcode_1}}", { Ünïcode_1: "ok" })).toBe("ok");
  });

  it("a key with no value is an error naming it and its line, as Go's missingkey=error", () => {
    const run = () => renderTemplate("Name: x\nImage: {{ .image }}\n", { name: "x" });
    expect(run).toThrow(TemplateError);
    expect(run).toThrow(
      'failed to execute template: line 2: map has no entry for key "image" (give it with -V image=VALUE)',
    );
    // Not an own key: an object's prototype is no value.
    expect(() => renderTemplate("{{.constructor}}", {})).toThrow('no entry for key "constructor"');
  });

  it("Go's trim markers, comments and string literals (the way to write braces)", () => {
    expect(renderTemplate("a  {{- .x -}}\n  b", { x: "X" })).toBe("aXb");
    // A dash with no space after it is no trim marker (in Go a number's sign): not rendered.
    expect(() => renderTemplate("a {{-.x}}", { x: "X" })).toThrow("is not rendered by Shoal");
    expect(renderTemplate("keep{{/* a comment */}} this", {})).toBe("keep this");
    expect(renderTemplate("keep \n{{- /* trimmed */ -}}\n this", {})).toBe("keepthis");
    expect(renderTemplate('echo {{"{{"}} raw {{`}}`}} "{{ "q\\"t\\n" }}"', {})).toBe('echo {{ raw }} "q"t\n"');
  });

  it("refuses what it does not render, and an action left open, naming the line", () => {
    expect(() => renderTemplate("a\n{{ if .x }}y{{ end }}", { x: "1" })).toThrow(
      "failed to parse template: line 2: {{ if .x }} is not rendered by Shoal " +
        "(only {{.name}}, string literals and comments)",
    );
    for (const action of ["{{ .x | upper }}", "{{ $v := .x }}", "{{ .a.b }}", "{{ . }}", '{{ printf "%s" .x }}'])
      expect(() => renderTemplate(action, { x: "1" }), action).toThrow("is not rendered by Shoal");
    expect(() => renderTemplate("ok\nImage: {{ .image", { image: "i" })).toThrow(
      "failed to parse template: line 2: unclosed action",
    );
    expect(() => renderTemplate('{{ "\\q" }}', {})).toThrow("unsupported escape \\q");
  });
});

describe("templateVars (-V, pflag's StringToString)", () => {
  it("reads key=value pairs, comma-separated or one a flag, the later winning; = and quoted commas in values", () => {
    expect(templateVars(["a=1,b=2", "c=x=y", "a=3", '"d=p,q",e='])).toEqual({
      vars: { a: "3", b: "2", c: "x=y", d: "p,q", e: "" },
    });
  });

  it("a pair without = is what is wrong", () => {
    expect(templateVars(["a=1,b"])).toEqual({
      problem: 'invalid argument "a=1,b" for -V/--template-vars: b must be formatted as key=value',
    });
  });

  it("a pair with an empty key is what is wrong: no template can name it", () => {
    expect(templateVars(["a=1,=x"])).toEqual({
      problem: 'invalid argument "a=1,=x" for -V/--template-vars: =x has no key',
    });
    expect(templateVars(["="])).toEqual({ problem: 'invalid argument "=" for -V/--template-vars: = has no key' });
  });
});

describe("templateEnv (-E, a regular expression over the environment's names)", () => {
  const env = { APP_IMAGE: "busybox", APP_TAG: "1.36", HOME: "/root", MY_APP: "x", UNSET: undefined };

  it("picks the variables whose names it matches anywhere, as Go's MatchString; * alone is every one", () => {
    expect(templateEnv("^APP_", env)).toEqual({ vars: { APP_IMAGE: "busybox", APP_TAG: "1.36" } });
    expect(templateEnv("APP", env)).toEqual({ vars: { APP_IMAGE: "busybox", APP_TAG: "1.36", MY_APP: "x" } });
    expect(templateEnv("*", env)).toEqual({
      vars: { APP_IMAGE: "busybox", APP_TAG: "1.36", HOME: "/root", MY_APP: "x" },
    });
  });

  it("a pattern that is not a regular expression is what is wrong", () => {
    const got = templateEnv("APP_(", env);
    expect("problem" in got && got.problem).toMatch(/^-E\/--template-envs: /);
  });
});
