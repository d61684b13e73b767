export interface ShellJobOptions {
  /** batch unless said. */
  readonly type?: string;
  /** 250m CPU and 32Mb unless said. */
  readonly resources?: Record<string, string>;
  readonly timeouts?: Record<string, number>;
  readonly constraints?: readonly { Key: string; Operator: string; Values: string[] }[];
}

/** A job (Bacalhau's spec) of one docker task running `sh -c command` in `image`. */
export function shellJob(image: string, command: string, options: ShellJobOptions = {}) {
  return {
    Type: options.type ?? "batch",
    ...(options.constraints === undefined ? {} : { Constraints: options.constraints }),
    Tasks: [
      {
        Name: "main",
        Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } },
        Resources: options.resources ?? { CPU: "250m", Memory: "32Mb" },
        ...(options.timeouts === undefined ? {} : { Timeouts: options.timeouts }),
      },
    ],
  };
}
