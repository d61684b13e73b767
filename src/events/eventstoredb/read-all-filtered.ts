import { createRequire } from "node:module";
import type { AllStreamResolvedEvent, EventStoreDBClient, Position } from "@eventstore/db-client";
import type * as SharedPb from "@eventstore/db-client/generated/shared_pb.js";
import type * as StreamsGrpcPb from "@eventstore/db-client/generated/streams_grpc_pb.js";
import type * as StreamsPb from "@eventstore/db-client/generated/streams_pb.js";
import type * as ReadStreamModule from "@eventstore/db-client/dist/streams/utils/ReadStream.js";
import type * as ConvertModule from "@eventstore/db-client/dist/utils/convertGrpcEvent.js";

/*
 * @eventstore/db-client 6.2 offers a server-side filter only on subscribeToAll; its readAll always
 * sends "no filter". The server has answered filtered reads of $all since its first gRPC release
 * (Streams.Read with All + Count + Filter runs ReadAllForwardsFiltered), and
 * @kurrent/kurrentdb-client 1.x exposes it as `readAll({ filter })`. Until Shoal moves to that
 * client, this builds exactly the request the client's own readAll builds, plus the filter block
 * its subscribeToAll sets, and sends it through the client's connection handling. The modules
 * are the client's own (CommonJS, no exports map), loaded with require.
 */
const require = createRequire(import.meta.url);
const { Empty } = require("@eventstore/db-client/generated/shared_pb.js") as typeof SharedPb;
const { ReadReq } = require("@eventstore/db-client/generated/streams_pb.js") as typeof StreamsPb;
const { StreamsClient } = require("@eventstore/db-client/generated/streams_grpc_pb.js") as typeof StreamsGrpcPb;
const { ReadStream } = require("@eventstore/db-client/dist/streams/utils/ReadStream.js") as typeof ReadStreamModule;
const { convertGrpcEvent } = require("@eventstore/db-client/dist/utils/convertGrpcEvent.js") as typeof ConvertModule;

type CreateGrpcStream = ConstructorParameters<typeof ReadStream>[0];
type GrpcRead = ReturnType<InstanceType<typeof StreamsClient>["read"]>;

/** The two members of the client that its own read methods use (protected in its typings). */
interface ClientInternals {
  GRPCStreamCreator(
    client: typeof StreamsClient,
    debugName: string,
    creator: (client: InstanceType<typeof StreamsClient>) => GrpcRead,
  ): CreateGrpcStream;
  callArguments(
    baseOptions: object,
    callOptions: { deadline: number },
  ): Parameters<InstanceType<typeof StreamsClient>["read"]> extends [unknown, ...infer R] ? R : never;
}

function internals(client: EventStoreDBClient): ClientInternals {
  const c = client as unknown as Partial<ClientInternals>;
  if (typeof c.GRPCStreamCreator !== "function" || typeof c.callArguments !== "function") {
    throw new Error(
      "this @eventstore/db-client has no GRPCStreamCreator/callArguments; update src/events/eventstoredb/read-all-filtered.ts for it",
    );
  }
  return c as ClientInternals;
}

/** Fails at start-up, not on the first read, if the client's internals are not the ones this expects. */
export function assertFilteredReadSupported(client: EventStoreDBClient): void {
  internals(client);
}

/**
 * What the server filters on: event types or stream names, never both (FilterOptions holds one
 * of them), each as a regular expression (.NET's, on the server).
 */
export type ServerFilter = { readonly eventTypeRegex: string } | { readonly streamRegex: string };

type FilteredReadOptions = ServerFilter & {
  /** "end" with backwards only: the newest event first. */
  readonly from: "start" | "end" | Position;
  readonly maxCount: number;
  /** Forwards when absent. */
  readonly backwards?: boolean;
};

/** The gRPC request: the client's readAll request (forwards, count, no links) with its subscribeToAll's filter. */
export function filteredReadAllRequest(options: FilteredReadOptions): StreamsPb.ReadReq {
  const req = new ReadReq();
  const opts = new ReadReq.Options();
  const uuidOption = new ReadReq.Options.UUIDOption();
  uuidOption.setString(new Empty());
  const all = new ReadReq.Options.AllOptions();
  if (options.from === "start") all.setStart(new Empty());
  else if (options.from === "end") all.setEnd(new Empty());
  else {
    const position = new ReadReq.Options.Position();
    position.setCommitPosition(options.from.commit.toString(10));
    position.setPreparePosition(options.from.prepare.toString(10));
    all.setPosition(position);
  }
  opts.setAll(all);
  opts.setResolveLinks(false);
  opts.setCount(String(options.maxCount));
  opts.setUuidOption(uuidOption);
  const expression = new ReadReq.Options.FilterOptions.Expression();
  const filter = new ReadReq.Options.FilterOptions();
  if ("streamRegex" in options) {
    expression.setRegex(options.streamRegex);
    filter.setStreamIdentifier(expression);
  } else {
    expression.setRegex(options.eventTypeRegex);
    filter.setEventType(expression);
  }
  filter.setCount(new Empty());
  filter.setCheckpointintervalmultiplier(1);
  opts.setFilter(filter);
  opts.setReadDirection(
    options.backwards ? ReadReq.Options.ReadDirection.BACKWARDS : ReadReq.Options.ReadDirection.FORWARDS,
  );
  req.setOptions(opts);
  return req;
}

/**
 * Reads $all from `from` (inclusive, as the client's readAll; forwards unless asked), returning only events
 * whose type (or stream) matches the filter; the server counts `maxCount` in matching events only.
 */
export function readAllFiltered(
  client: EventStoreDBClient,
  options: FilteredReadOptions,
): AsyncIterable<AllStreamResolvedEvent> {
  const { GRPCStreamCreator, callArguments } = internals(client);
  const req = filteredReadAllRequest(options);
  const createStream = GRPCStreamCreator.call(client, StreamsClient, "readAll", (grpc) =>
    grpc.read(req, ...callArguments.call(client, {}, { deadline: Infinity })),
  );
  return new ReadStream<AllStreamResolvedEvent>(createStream, convertGrpcEvent as never, {});
}
