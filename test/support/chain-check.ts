import Database from "better-sqlite3";
import { eventLink, ZERO_LINK } from "../../src/events/chain/event-link.ts";

/**
 * The links a store file holds beside the links worked out again from its rows alone, from the
 * genesis it records (which must itself be the chain of every row up to it), in store order.
 */
export function chainOf(file: string): {
  genesis: { afterPosition: number; link: string; expected: string };
  stored: [number, string | null][];
  expected: [number, string][];
} {
  const db = new Database(file, { readonly: true });
  try {
    const genesis = db.prepare("SELECT after_position, link FROM chain_genesis").get() as {
      after_position: number;
      link: Buffer;
    };
    const rows = db
      .prepare(
        "SELECT position, event_id, stream, revision, type, time, data, metadata, link FROM events ORDER BY position",
      )
      .all() as {
      position: number;
      event_id: string;
      stream: string;
      revision: number;
      type: string;
      time: string;
      data: string;
      metadata: string;
      link: Buffer | null;
    }[];
    let link = ZERO_LINK;
    let previous = 0;
    let genesisExpected = ZERO_LINK.toString("hex");
    const stored: [number, string | null][] = [];
    const expected: [number, string][] = [];
    for (const r of rows) {
      link = eventLink(link, previous, { ...r, id: r.event_id });
      previous = r.position;
      if (r.position <= genesis.after_position) {
        if (r.position === genesis.after_position) genesisExpected = link.toString("hex");
        continue;
      }
      stored.push([r.position, r.link === null ? null : r.link.toString("hex")]);
      expected.push([r.position, link.toString("hex")]);
    }
    return {
      genesis: { afterPosition: genesis.after_position, link: genesis.link.toString("hex"), expected: genesisExpected },
      stored,
      expected,
    };
  } finally {
    db.close();
  }
}
