/** The lines of an NDJSON response as they arrive (a last line without its newline included), blank ones skipped. */
export async function* ndjsonLines(res: Response): AsyncGenerator<string> {
  if (res.body === null) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += value;
      const lines = rest.split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") yield line;
    }
    if (rest.trim() !== "") yield rest;
  } finally {
    reader.releaseLock();
  }
}
