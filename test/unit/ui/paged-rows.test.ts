import { describe, expect, it } from "vitest";
import { PagedRows, type RowsPage } from "../../../ui/src/common/paged-rows.ts";

const PAGE = 10;
const ids = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `n-${String(from + i).padStart(3, "0")}`);

/** The API's paging over a sorted list: a cursor names the last row of a page, and a page reads the rows after it. */
function fleet(initial: readonly string[]) {
  const rows = [...initial];
  const reads: string[] = [];
  return {
    rows,
    reads,
    insert: (id: string) => {
      rows.push(id);
      rows.sort();
    },
    remove: (id: string) => rows.splice(rows.indexOf(id), 1),
    read: async (start: string, limit: number): Promise<RowsPage<string>> => {
      reads.push(start);
      const after = rows.filter((id) => id > start);
      const items = after.slice(0, limit);
      return { items, next: after.length > limit ? items[items.length - 1]! : "" };
    },
  };
}

async function loadAll(list: PagedRows<string>) {
  while (!list.complete) await list.loadMore();
}

describe("PagedRows: a long list read a page at a time, refreshed where it is shown", () => {
  it("reads page after page to the end, each once", async () => {
    const api = fleet(ids(0, 35));
    const list = new PagedRows(api.read, PAGE, () => undefined);
    await list.loadMore();
    expect(list.items).toEqual(ids(0, 10));
    expect(list.complete).toBe(false);
    await loadAll(list);
    expect(list.items).toEqual(ids(0, 35));
    expect(api.reads).toEqual(["", "n-009", "n-019", "n-029"]);
  });

  it("re-reads only the pages on screen, and the others once they are shown again", async () => {
    const api = fleet(ids(0, 50));
    const list = new PagedRows(api.read, PAGE, () => undefined);
    await loadAll(list);
    list.show(15, 25);
    api.reads.length = 0;
    await list.refresh();
    expect(api.reads).toEqual(["n-009", "n-019"]);
    expect(list.staleShown).toBe(false);
    list.show(40, 45);
    expect(list.staleShown).toBe(true);
    await list.refreshShown();
    expect(api.reads).toEqual(["n-009", "n-019", "n-039"]);
  });

  it("keeps the rows whole when a row comes or goes inside the window: no gap, no row twice", async () => {
    const api = fleet(ids(0, 50).filter((_, i) => i % 2 === 0));
    const list = new PagedRows(api.read, PAGE, () => undefined);
    await loadAll(list);
    list.show(5, 15);
    api.insert("n-011");
    await list.refresh();
    // The rows below the window that began at a page's old end are dropped, to be read again on the way down.
    expect(list.items).toEqual(api.rows.slice(0, list.items.length));
    expect(list.items.length).toBeGreaterThanOrEqual(15);
    await loadAll(list);
    expect(list.items).toEqual(api.rows);

    api.remove("n-004");
    list.show(0, 12);
    await list.refresh();
    await loadAll(list);
    expect(list.items).toEqual(api.rows);
  });

  it("keeps what it has when a read fails, and says so until one succeeds", async () => {
    const api = fleet(ids(0, 30));
    let failing = false;
    const list = new PagedRows(
      async (start: string, limit: number) => {
        if (failing) throw new Error("the orchestrator did not answer");
        return api.read(start, limit);
      },
      PAGE,
      () => undefined,
    );
    await list.loadMore();
    list.show(0, 5);
    failing = true;
    await list.refresh();
    expect(String(list.error)).toContain("did not answer");
    expect(list.items).toEqual(ids(0, 10));
    failing = false;
    await list.refresh();
    expect(list.error).toBeUndefined();
  });

  it("has no rows when its first read is refused (a bad label selector)", async () => {
    const list = new PagedRows(
      async (): Promise<RowsPage<string>> => {
        throw new Error("invalid label selector");
      },
      PAGE,
      () => undefined,
    );
    await list.loadMore();
    expect(list.items).toEqual([]);
    expect(list.loaded).toBe(false);
    expect(String(list.error)).toContain("invalid label selector");
  });

  it("changes nothing with a read that returns after it was stopped (the filters changed meanwhile)", async () => {
    const api = fleet(ids(0, 30));
    let changes = 0;
    const list = new PagedRows(api.read, PAGE, () => changes++);
    const reading = list.loadMore();
    const before = changes;
    list.stop();
    await reading;
    expect(list.items).toEqual([]);
    expect(changes).toBe(before);
  });
});
