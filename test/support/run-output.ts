/** A node's RunOutput (the work protocol's shape) of a command that printed `hello` and exited 0. */
export const helloOutput = {
  STDOUT: "hello\n",
  StdoutTruncated: false,
  STDERR: "",
  StderrTruncated: false,
  ExitCode: 0,
  ErrorMsg: "",
};
