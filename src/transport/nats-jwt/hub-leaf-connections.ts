import { createInbox, type NatsConnection } from "nats";
import { HUB_ANSWER_PREFIX } from "../nats-auth/nats-roles.ts";
import { NatsOperatorError } from "./nats-operator.ts";

/** One leaf connection as the hub reports it (LEAFZ): the hub's own view, nothing the leaf claims. */
export interface HubLeafConnection {
  /** `ip:port` of the leaf's end: unique among the hub's live connections. */
  readonly connection: string;
  readonly account: string;
  /** The subjects the leaf has shown interest in, as the hub holds them. */
  readonly subscriptions: readonly string[];
}

interface LeafzAnswer {
  readonly data?: {
    readonly leafs?: readonly {
      account?: string;
      ip?: string;
      port?: number;
      subscriptions_list?: readonly string[];
    }[];
  };
  readonly error?: { readonly description?: string };
}

/**
 * The leaf connections in `account` that the hub `system` is connected to holds now, with their
 * subscriptions (`$SYS.REQ.SERVER.<id>.LEAFZ`), answered on an inbox no leaf may publish to.
 * Asked for one account only: a Shoal-account leaf connection carries two subscriptions per node.
 */
export async function hubLeafConnections(
  system: NatsConnection,
  account: string,
  timeoutMs = 2000,
): Promise<HubLeafConnection[]> {
  const hub = system.info?.server_id;
  if (!hub) throw new NatsOperatorError("not connected to the hub: no server id to ask");
  const inbox = createInbox(HUB_ANSWER_PREFIX);
  const answer = await new Promise<LeafzAnswer>((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new NatsOperatorError(`nats-server ${hub} did not answer LEAFZ within ${timeoutMs} ms`));
    }, timeoutMs);
    const sub = system.subscribe(inbox, {
      max: 1,
      callback: (err, msg) => {
        clearTimeout(timer);
        if (err) return reject(new NatsOperatorError(`nats-server ${hub} did not answer LEAFZ: ${err.message}`));
        try {
          resolve(JSON.parse(new TextDecoder().decode(msg.data)) as LeafzAnswer);
        } catch {
          reject(new NatsOperatorError(`nats-server ${hub} answered LEAFZ with something other than JSON`));
        }
      },
    });
    try {
      system.publish(
        `$SYS.REQ.SERVER.${hub}.LEAFZ`,
        new TextEncoder().encode(JSON.stringify({ subscriptions: true, account })),
        { reply: inbox },
      );
    } catch (e) {
      clearTimeout(timer);
      sub.unsubscribe();
      reject(e as Error);
    }
  });
  if (answer.error)
    throw new NatsOperatorError(`nats-server ${hub} refused LEAFZ: ${answer.error.description ?? "no reason given"}`);
  return (answer.data?.leafs ?? [])
    .filter((leaf) => leaf.account === account)
    .map((leaf) => ({
      connection: `${leaf.ip ?? "?"}:${leaf.port ?? 0}`,
      account: leaf.account ?? "",
      // A queue subscription is listed as "subject queue".
      subscriptions: (leaf.subscriptions_list ?? []).map((s) => s.split(" ")[0]!),
    }));
}

/** Whether a subscription to `pattern` (NATS wildcards `*` and `>`) receives messages on `subject`. */
export function subjectCovers(pattern: string, subject: string): boolean {
  const want = pattern.split(".");
  const have = subject.split(".");
  for (let i = 0; i < want.length; i++) {
    if (want[i] === ">") return have.length > i;
    if (i >= have.length || (want[i] !== "*" && want[i] !== have[i])) return false;
  }
  return want.length === have.length;
}
