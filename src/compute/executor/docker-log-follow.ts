import type Docker from "dockerode";
import { dockerFrames } from "./docker-frames.ts";
import { dockerLogStream } from "./docker-log-stream.ts";
import type { LogChunk } from "./executor.ts";

type Destroyable = NodeJS.ReadableStream & { destroy?: () => void };

/**
 * Follows a container's log from its start to its end. Docker 20.10's follow can end before the
 * container's last output reaches it (an unterminated last line, flushed as the container exits,
 * was missed by most follows here), so once the follow ends the whole log is read again
 * and what the follow did not give is given: per stream, the bytes past those already given.
 * `onReread` is called once that second read has been read to its end (or will not be made), so
 * that whoever removes the container can wait for it: an answered read is not yet a read one, and
 * a removal in between cut the re-read short (a follower then got nothing of the last line).
 */
export async function* followDockerLog(
  docker: Docker,
  containerId: string,
  signal: AbortSignal | undefined,
  onReread: () => void,
): AsyncGenerator<LogChunk> {
  const given = { stdout: 0, stderr: 0 };
  const streams: Destroyable[] = [];
  try {
    const live = (await dockerLogStream(docker, containerId, {
      follow: true,
      ...(signal ? { abortSignal: signal } : {}),
    })) as Destroyable;
    streams.push(live);
    for await (const chunk of dockerFrames(live as AsyncIterable<Buffer>)) {
      given[chunk.stream] += chunk.data.length;
      yield chunk;
    }
    if (signal?.aborted) return;
    const all = (await dockerLogStream(docker, containerId, {
      follow: false,
      ...(signal ? { abortSignal: signal } : {}),
    })) as Destroyable;
    streams.push(all);
    const reread = { stdout: 0, stderr: 0 };
    for await (const chunk of dockerFrames(all as AsyncIterable<Buffer>)) {
      const skip = given[chunk.stream] - reread[chunk.stream];
      reread[chunk.stream] += chunk.data.length;
      if (skip >= chunk.data.length) continue;
      yield skip > 0 ? { stream: chunk.stream, data: chunk.data.subarray(skip) } : chunk;
    }
  } finally {
    onReread();
    for (const s of streams) s.destroy?.();
  }
}
