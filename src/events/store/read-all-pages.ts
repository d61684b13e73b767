import type { ReadAllOptions, ReadAllPagesOptions, RecordedEvent } from "./event-store.ts";

/** EventStore.readAllPages as a loop over readAll, on the caller's thread: one page read per page taken. */
export async function* readAllPagesInline(
  readAll: (options: ReadAllOptions) => Promise<RecordedEvent[]>,
  options: ReadAllPagesOptions,
): AsyncGenerator<readonly RecordedEvent[]> {
  let after = options.after ?? 0;
  for (;;) {
    const page = await readAll({ after, maxCount: options.pageSize });
    if (page.length > 0) {
      after = (page[page.length - 1] as RecordedEvent).position;
      yield page;
    }
    if (page.length < options.pageSize) return;
  }
}
