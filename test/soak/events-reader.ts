import { readFileSync } from "node:fs";
import { AckPolicy, DeliverPolicy, connect, credsAuthenticator, nanos, type JsMsg, type NatsConnection } from "nats";
import { EVENTS_STREAM } from "../../src/transport/subjects.ts";

/** One message as the downstream reader got it: JetStream's stream sequence and the event it carries. */
export interface ReadEvent {
  readonly seq: number;
  readonly id: string;
  readonly position: number;
  readonly stream: string;
  readonly type: string;
  readonly subject: string;
}

const CONSUMER = "soak-auditor";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A downstream system on SHOAL_EVENTS as docs/security.md describes one: the reader credentials
 * file (read again at every connect, since `shoal serve` issues a new JWT at each start), a
 * durable pull consumer from the first event with explicit acks, fetched in a loop that outlives
 * the orchestrator's restarts. Every delivery is kept, redeliveries included: the check tells a
 * consumer's redelivery (the same stream sequence) from an event published twice (another one).
 */
export class EventsReader {
  readonly received: ReadEvent[] = [];
  private readonly ids = new Set<string>();
  redeliveries = 0;
  fetchErrors = 0;
  lastError = "";
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();

  private constructor(private readonly nc: NatsConnection) {}

  static async start(natsUrl: string, credsFile: string): Promise<EventsReader> {
    const nc = await connect({
      servers: natsUrl,
      authenticator: credsAuthenticator(() => readFileSync(credsFile)),
      name: "soak-events-reader",
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    const jsm = await nc.jetstreamManager();
    await jsm.consumers.add(EVENTS_STREAM, {
      durable_name: CONSUMER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // A message that reached the client after its fetch had expired is dropped there and comes
      // again once this passes (JetStream's default is 30 s): the soak's end waits for it.
      ack_wait: nanos(5_000),
    });
    const reader = new EventsReader(nc);
    reader.loop = reader.run();
    return reader;
  }

  /** The store position of the last message received (0: none). */
  get lastPosition(): number {
    return this.received.at(-1)?.position ?? 0;
  }

  has(eventId: string): boolean {
    return this.ids.has(eventId);
  }

  /** What JetStream holds: telling an event never stored in the stream from one not delivered to this consumer. */
  async streamState(): Promise<{ messages: number; firstSeq: number; lastSeq: number }> {
    const { state } = await (await this.nc.jetstreamManager()).streams.info(EVENTS_STREAM);
    return { messages: state.messages, firstSeq: state.first_seq, lastSeq: state.last_seq };
  }

  /** Stream sequences between the first and the last this consumer received that it never received. */
  unreceivedSequences(): number[] {
    const seen = new Set(this.received.map((r) => r.seq));
    const gaps: number[] = [];
    for (let seq = Math.min(...seen); seq < Math.max(...seen); seq++) if (!seen.has(seq)) gaps.push(seq);
    return gaps;
  }

  private async run(): Promise<void> {
    const decoder = new TextDecoder();
    while (!this.stopped) {
      try {
        const consumer = await this.nc.jetstream().consumers.get(EVENTS_STREAM, CONSUMER);
        const batch = await consumer.fetch({ max_messages: 1000, expires: 1000 });
        for await (const m of batch) {
          this.keep(m, decoder);
          m.ack();
        }
      } catch (e) {
        this.fetchErrors++;
        this.lastError = (e as Error).message;
        await sleep(250);
      }
    }
  }

  private keep(m: JsMsg, decoder: { decode(data: Uint8Array): string }): void {
    if (m.redelivered) this.redeliveries++;
    const event = JSON.parse(decoder.decode(m.data)) as { id: string; position: number; stream: string; type: string };
    const { id, position, stream, type } = event;
    this.received.push({ seq: m.seq, id, position, stream, type, subject: m.subject });
    this.ids.add(id);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await this.nc.close().catch(() => undefined);
  }
}
