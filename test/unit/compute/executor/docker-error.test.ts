import { describe, expect, it } from "vitest";
import { dockerError, isDockerContainerGone } from "../../../../src/compute/executor/docker-error.ts";
import { notFound } from "../../../../src/errors/shoal-error.ts";

/** Errors shaped as dockerode gives them (from docker-modem): statusCode, json.message, reason. */
function modemError(statusCode: number, message: string): Error {
  return Object.assign(new Error(`(HTTP code ${statusCode}) unexpected - ${message} `), {
    statusCode,
    json: { message },
    reason: "unexpected",
  });
}

describe("dockerError", () => {
  it.each([
    [400, "BadRequest", "creating x: Docker refused it: Minimum memory limit allowed is 6MB"],
    [404, "NotFound", "creating x: Minimum memory limit allowed is 6MB"],
    [409, "Conflict", "creating x: Minimum memory limit allowed is 6MB"],
    [500, "Unavailable", "creating x: the Docker engine failed: Minimum memory limit allowed is 6MB"],
    [503, "Unavailable", "creating x: the Docker engine failed: Minimum memory limit allowed is 6MB"],
    [418, "Internal", "creating x: Minimum memory limit allowed is 6MB"],
  ])("maps HTTP %i to %s with the engine's own words", (status, kind, message) => {
    const e = dockerError(modemError(status, "Minimum memory limit allowed is 6MB"), "creating x");
    expect([e.kind, e.message]).toEqual([kind, message]);
  });

  it("maps an engine it cannot reach to Unavailable with a retry hint", () => {
    const e = dockerError(
      Object.assign(new Error("connect ENOENT /var/run/docker.sock"), { code: "ENOENT" }),
      "listing",
    );
    expect(e.kind).toBe("Unavailable");
    expect(e.retryAfterSeconds).toBeGreaterThan(0);
    expect(e.message).toBe("listing: the Docker engine cannot be reached (connect ENOENT /var/run/docker.sock)");
  });

  it("keeps a ShoalError as it is", () => {
    const original = notFound("image x is not on node n1");
    expect(dockerError(original, "anything")).toBe(original);
  });
});

describe("isDockerContainerGone", () => {
  it("takes a missing container, and a log read from one Docker is removing, as gone; other conflicts not", () => {
    expect(isDockerContainerGone(modemError(404, "No such container: abc"))).toBe(true);
    const removing = "can not get logs from container which is dead or marked for removal";
    expect(isDockerContainerGone(modemError(409, removing))).toBe(true);
    expect(isDockerContainerGone(modemError(409, "container abc is not running"))).toBe(false);
    expect(isDockerContainerGone(modemError(500, removing))).toBe(false);
  });
});
