import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Docker from "dockerode";

/** The image the README's tour runs a job in: busybox, built locally (no registry is needed). */
export const TOUR_IMAGE = "shoal-test/busybox:1";

const PING_TIMEOUT_MS = 5_000;
const BUILD_TIMEOUT_MS = 120_000;

export interface DockerReadiness {
  /** Whether the compute nodes can run container jobs (an engine answers and the tour image is there). */
  readonly ready: boolean;
  /** What to tell the user: what was found or done, and how to fix what is missing. */
  readonly lines: readonly string[];
}

/**
 * scripts/ of the checkout this CLI runs from (src/cli/commands/ or dist/src/cli/commands/ below it), if there is one.
 */
function scriptPath(name: string): string | undefined {
  for (const up of ["../../../scripts/", "../../../../scripts/"]) {
    const candidate = fileURLToPath(new URL(`${up}${name}`, import.meta.url));
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

async function engineAnswers(docker: Docker): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      docker.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS / 1000}s`)), PING_TIMEOUT_MS);
      }),
    ]);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What the devstack's compute nodes need to run the README's container job: a Docker engine
 * that answers (DOCKER_HOST or the default socket) and the tour image in it, built from the
 * machine's busybox-static by scripts/build-test-image when it is missing (nothing is pulled).
 * Never fails the devstack: without them the nodes still join and the node tour works; the
 * lines say what is missing and how to get it.
 */
export async function prepareDockerForDevstack(
  progress: (line: string) => void = () => undefined,
): Promise<DockerReadiness> {
  const where = process.env.DOCKER_HOST ? `DOCKER_HOST=${process.env.DOCKER_HOST}` : "/var/run/docker.sock";
  const docker = new Docker();
  const down = await engineAnswers(docker);
  const startDockerd = scriptPath("start-dockerd");
  if (down !== undefined) {
    return {
      ready: false,
      lines: [
        `No Docker engine answers at ${where} (${down}): the compute nodes join but run no jobs.`,
        `  Start one: ${startDockerd ? `bash ${startDockerd}` : "sudo dockerd --iptables=false --bridge=none &"} (Debian: apt-get install docker.io busybox-static), then restart the devstack.`,
      ],
    };
  }
  try {
    await docker.getImage(TOUR_IMAGE).inspect();
    return { ready: true, lines: [`Docker engine at ${where}; the tour image ${TOUR_IMAGE} is there.`] };
  } catch {
    // Missing: built below.
  }
  const build = scriptPath("build-test-image");
  const how = `install busybox-static and run ${build ? `bash ${build}` : "scripts/build-test-image from Shoal's checkout"}`;
  if (build === undefined)
    return { ready: false, lines: [`The tour image ${TOUR_IMAGE} is not in the Docker engine: ${how}.`] };
  progress(`Building the tour image ${TOUR_IMAGE} from busybox (${build}); once per Docker engine…`);
  try {
    await promisify(execFile)("bash", [build], { timeout: BUILD_TIMEOUT_MS });
    return {
      ready: true,
      lines: [`Docker engine at ${where}; built the tour image ${TOUR_IMAGE} from busybox (${build}).`],
    };
  } catch (e) {
    const why = ((e as { stderr?: string }).stderr ?? (e as Error).message).trim().split("\n").at(-1) ?? "";
    return {
      ready: false,
      lines: [`The tour image ${TOUR_IMAGE} is not in the Docker engine and could not be built (${why}): ${how}.`],
    };
  }
}
