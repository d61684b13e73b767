import type { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { goBodyKeys } from "../../../src/api/go-body-keys.ts";
import { PutJobRequest, StopJobRequest } from "../../../src/api/jobs/job-routes.ts";
import { PutNodeRequest } from "../../../src/api/nodes/update-node-command.ts";
import { ShoalError } from "../../../src/errors/shoal-error.ts";

const refusal = (schema: Schema.Schema.Any, body: unknown): ShoalError => {
  try {
    goBodyKeys(schema, body);
  } catch (e) {
    expect(e).toBeInstanceOf(ShoalError);
    return e as ShoalError;
  }
  throw new Error("accepted");
};

describe("request bodies' field names, matched as Go's encoding/json matches them", () => {
  it("takes a field in any case, and the exact name as it is", () => {
    expect(goBodyKeys(PutNodeRequest, { action: "approve", MESSAGE: "ok", nodeid: "n-1" })).toEqual({
      Action: "approve",
      Message: "ok",
      NodeID: "n-1",
    });
    expect(goBodyKeys(StopJobRequest, { Reason: "done", namespace: "default" })).toEqual({
      reason: "done",
      Namespace: "default",
    });
    // Go's folding: the long s is an s, the Kelvin sign a k.
    expect(goBodyKeys(PutNodeRequest, { Meſſage: "x", "\u212Aeepdaemon": true })).toEqual({
      Message: "x",
      KeepDaemon: true,
    });
  });

  it("folds nested fields of the job a PUT /jobs carries, never the keys of its maps", () => {
    const body = {
      job: {
        type: "batch",
        labels: { Zone: "a", zone: "b" },
        meta: { Owner: "x" },
        constraints: [{ key: "os_arch", operator: "=", values: ["amd64"] }],
        tasks: [
          {
            name: "main",
            engine: { type: "docker", params: { image: "busybox:1", parameters: ["echo"] } },
            env: { Path: "p", PATH: "q" },
            resources: { cpu: "1" },
          },
        ],
      },
      force: false,
    };
    expect(goBodyKeys(PutJobRequest, body)).toEqual({
      Job: {
        Type: "batch",
        Labels: { Zone: "a", zone: "b" },
        Meta: { Owner: "x" },
        Constraints: [{ Key: "os_arch", Operator: "=", Values: ["amd64"] }],
        Tasks: [
          {
            Name: "main",
            Engine: { Type: "docker", Params: { Image: "busybox:1", Parameters: ["echo"] } },
            Env: { Path: "p", PATH: "q" },
            Resources: { CPU: "1" },
          },
        ],
      },
      Force: false,
    });
    expect(goBodyKeys(PutNodeRequest, { action: "label", labels: { Zone: "a", zone: "b" } })).toEqual({
      Action: "label",
      Labels: { Zone: "a", zone: "b" },
    });
  });

  it("leaves fields no schema names as sent, for validation to refuse", () => {
    expect(goBodyKeys(PutNodeRequest, { action: "approve", bogus: 1 })).toEqual({ Action: "approve", bogus: 1 });
    expect(goBodyKeys(PutJobRequest, { Job: "not a job" })).toEqual({ Job: "not a job" });
  });

  it("refuses two keys for one field with a 400 naming both and where", () => {
    const top = refusal(PutNodeRequest, { Action: "approve", action: "reject" });
    expect(top.kind).toBe("BadRequest");
    expect(top.message).toBe(
      `both "Action" and "action" are given at the top: field names match ignoring case, as Go's decoder matches ` +
        `them, so both would be Action; give it once`,
    );
    const nested = refusal(PutJobRequest, { Job: { Tasks: [{ Name: "a", NAME: "b" }] } });
    expect(nested.message).toContain(`both "Name" and "NAME" are given in Job.Tasks[0]`);
  });
});
