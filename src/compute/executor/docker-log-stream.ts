import type Docker from "dockerode";
import type DockerModem from "docker-modem";

export interface DockerLogStreamOptions {
  readonly follow: boolean;
  readonly abortSignal?: AbortSignal;
}

/**
 * A container's json-file log from its start, as Docker's multiplexed byte stream. dockerode
 * answers a read without `follow` with one Buffer of the whole log; this streams it, so that
 * reading a log the engine bounds to megabytes never holds it all in memory.
 */
export function dockerLogStream(
  docker: Docker,
  containerId: string,
  options: DockerLogStreamOptions,
): Promise<NodeJS.ReadableStream> {
  const dial = {
    path: `/containers/${encodeURIComponent(containerId)}/logs?`,
    method: "GET",
    isStream: true,
    ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
    statusCodes: { 200: true, 404: "no such container", 500: "server error" },
    options: { stdout: true, stderr: true, follow: options.follow },
  } as DockerModem.DialOptions;
  return new Promise((resolve, reject) =>
    docker.modem.dial(dial, (err, stream) => (err ? reject(err) : resolve(stream as NodeJS.ReadableStream))),
  );
}
