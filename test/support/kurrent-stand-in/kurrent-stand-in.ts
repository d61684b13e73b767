/**
 * A KurrentDB stand-in for tests. It is a TEST DOUBLE, NOT A DATABASE: one process, memory only,
 * no scavenging, no projections, and of secure mode only TLS and one user's password. It serves
 * the client's own gRPC service definitions (the generated code shipped in @kurrent/kurrentdb-client)
 * over a real socket, so the real client (its grpc-js appends and subscriptions, its native bridge's
 * reads) talks to it as to a server: Streams.Read (streams, $all with positions and server-side
 * filters, subscriptions that catch up then go live), Streams.BatchAppend, ServerFeatures and Gossip,
 * behaving as the server's source says they do. Faults are scripted: a follower that answers "not
 * leader" with the leader's address, an election window that refuses appends, subscriptions that
 * the server ends cleanly or drops, and an old server version.
 */
import { createRequire } from "node:module";
import type { Server as NetServer, Socket } from "node:net";
import * as grpc from "@grpc/grpc-js";
import type * as GossipGrpc from "@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/gossip_grpc_pb.js";
import type * as GossipPb from "@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/gossip_pb.js";
import type * as FeaturesPb from "@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_pb.js";
import type * as SharedPb from "@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb.js";
import type * as StatusPb from "@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/status_pb.js";
import type * as StreamsGrpc from "@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_grpc_pb.js";
import type * as StreamsPb from "@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb.js";
import type * as AnyPb from "google-protobuf/google/protobuf/any_pb.js";
import type * as EmptyPb from "google-protobuf/google/protobuf/empty_pb.js";
import { StandInLog, type Expected, type StandInEvent } from "./stand-in-log.ts";

// The client's generated modules are CommonJS with no exports map: loaded with require.
const require = createRequire(import.meta.url);
const V1 = "@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1";
const { StreamsService } = require(`${V1}/streams_grpc_pb.js`) as typeof StreamsGrpc;
const { ReadReq, ReadResp, BatchAppendReq, BatchAppendResp } = require(`${V1}/streams_pb.js`) as typeof StreamsPb;
const { ServerFeaturesService } = require(`${V1}/serverfeatures_grpc_pb.js`) as {
  readonly ServerFeaturesService: grpc.ServiceDefinition;
};
const { SupportedMethods, SupportedMethod } = require(`${V1}/serverfeatures_pb.js`) as typeof FeaturesPb;
const { GossipService } = require(`${V1}/gossip_grpc_pb.js`) as typeof GossipGrpc;
const { ClusterInfo, MemberInfo, EndPoint } = require(`${V1}/gossip_pb.js`) as typeof GossipPb;
const Shared = require(`${V1}/shared_pb.js`) as typeof SharedPb;
const { Status } = require(`${V1}/status_pb.js`) as typeof StatusPb;
const { Any } = require("google-protobuf/google/protobuf/any_pb.js") as typeof AnyPb;
const { Empty } = require("google-protobuf/google/protobuf/empty_pb.js") as typeof EmptyPb;

type ReadCall = grpc.ServerWritableStream<StreamsPb.ReadReq, StreamsPb.ReadResp>;
type BatchCall = grpc.ServerDuplexStream<StreamsPb.BatchAppendReq, StreamsPb.BatchAppendResp>;

/** What the server answers an append with while it has no leader (Streams.BatchAppend.cs). */
export type ElectionRefusal = "Server Is Not Ready" | "Server Is Busy" | "No leader info available in response";

export interface StandInOptions {
  /** The log; share one between a leader and a follower stand-in. A new one when absent. */
  readonly log?: StandInLog;
  /** ServerFeatures' server version; undefined: no ServerFeatures service, as before 21.10. */
  readonly version?: string | undefined;
  /** This node is a follower of the leader at this address: appends and leader-only reads are refused. */
  readonly leader?: { readonly host: string; readonly port: number };
  /** Serve TLS with this certificate and key (PEM), as a secure node does; clients trust the CA in `caFile`. */
  readonly tls?: { readonly cert: string; readonly key: string; readonly caFile: string };
  /** The one user a secure node lets in (HTTP basic credentials on every call), as its own users do. */
  readonly user?: { readonly username: string; readonly password: string };
}

/** A secure node's answers: wrong credentials (its authentication middleware), none where a user is needed. */
const UNAUTHENTICATED: Partial<grpc.StatusObject> = { code: grpc.status.UNAUTHENTICATED, details: "Unauthenticated" };
function accessDenied(): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  metadata.set("exception", "access-denied");
  return { code: grpc.status.PERMISSION_DENIED, details: "Access Denied", metadata };
}

const structuredUuid = (id: string): SharedPb.UUID => {
  const hex = id.replace(/-/g, "");
  const bits = (h: string) => BigInt.asIntN(64, BigInt(`0x${h}`)).toString();
  const s = new Shared.UUID.Structured();
  s.setMostSignificantBits(bits(hex.slice(0, 16)));
  s.setLeastSignificantBits(bits(hex.slice(16)));
  return new Shared.UUID().setStructured(s);
};

const uuidString = (uuid: SharedPb.UUID | undefined): string => {
  if (uuid === undefined) return "";
  if (uuid.hasString()) return uuid.getString();
  const s = uuid.getStructured()!;
  const hex = (v: string) => BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, "0");
  const h = hex(s.getMostSignificantBits()) + hex(s.getLeastSignificantBits());
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

const streamId = (name: string) => new Shared.StreamIdentifier().setStreamName(Buffer.from(name, "utf8"));

/** A server-side filter on event type or stream name, by regular expression or prefixes. */
function filterOf(options: StreamsPb.ReadReq.Options): (e: StandInEvent) => boolean {
  if (!options.hasFilter()) return () => true;
  const f = options.getFilter()!;
  const onType = f.getFilterCase() === ReadReq.Options.FilterOptions.FilterCase.EVENT_TYPE;
  const expr = onType ? f.getEventType()! : f.getStreamIdentifier()!;
  const regex = expr.getRegex() === "" ? undefined : new RegExp(expr.getRegex());
  const prefixes = expr.getPrefixList();
  return (e) => {
    const value = onType ? e.type : e.stream;
    return (regex?.test(value) ?? true) && (prefixes.length === 0 || prefixes.some((p) => value.startsWith(p)));
  };
}

function eventResp(e: StandInEvent, structured: boolean): StreamsPb.ReadResp {
  const recorded = new ReadResp.ReadEvent.RecordedEvent()
    .setId(structured ? structuredUuid(e.id) : new Shared.UUID().setString(e.id))
    .setStreamIdentifier(streamId(e.stream))
    .setStreamRevision(String(e.revision))
    .setPreparePosition(String(e.position))
    .setCommitPosition(String(e.position))
    .setCustomMetadata(e.metadata)
    .setData(e.data);
  recorded.getMetadataMap().set("type", e.type).set("content-type", e.contentType).set("created", String(e.created));
  return new ReadResp().setEvent(new ReadResp.ReadEvent().setEvent(recorded).setCommitPosition(String(e.position)));
}

/** The trailers a node that is not the leader answers with (RpcExceptions.LeaderInfo). */
function notLeader(leader: { readonly host: string; readonly port: number }): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  metadata.set("exception", "not-leader");
  metadata.set("leader-endpoint-host", leader.host);
  metadata.set("leader-endpoint-port", String(leader.port));
  return { code: grpc.status.NOT_FOUND, details: "Leader info available", metadata };
}

function expectedOf(options: StreamsPb.BatchAppendReq.Options): Expected {
  const Case = BatchAppendReq.Options.ExpectedStreamPositionCase;
  const which = options.getExpectedStreamPositionCase();
  if (which === Case.NO_STREAM) return "no_stream";
  if (which === Case.STREAM_EXISTS) return "stream_exists";
  if (which === Case.STREAM_POSITION) return Number(options.getStreamPosition());
  return "any";
}

function statusOf(message: string, type: string, detail: Uint8Array): StatusPb.Status {
  const any = new Any();
  any.pack(detail, type);
  return new Status().setMessage(message).setDetails(any);
}

/** One BatchAppend request as it arrived, refused or not. */
export interface AppendAttempt {
  readonly stream: string;
  readonly ids: readonly string[];
  readonly expected: Expected;
}

export class KurrentStandIn {
  readonly log: StandInLog;
  readonly appendAttempts: AppendAttempt[] = [];
  private readonly server = new grpc.Server();
  private readonly subscriptions = new Set<ReadCall>();
  private refusals: { reason: ElectionRefusal; left: number } | undefined;
  private port = 0;

  private constructor(private readonly options: StandInOptions) {
    this.log = options.log ?? new StandInLog();
  }

  /** Starts on a free loopback port. */
  static async start(options: StandInOptions = { version: "24.10.4" }): Promise<KurrentStandIn> {
    const standIn = new KurrentStandIn(options);
    await standIn.listen();
    return standIn;
  }

  get host(): string {
    return "127.0.0.1";
  }

  get address(): { readonly host: string; readonly port: number } {
    return { host: this.host, port: this.port };
  }

  /** The connection string Shoal's EventStore.URL takes: with the user and the CA file of a secure stand-in. */
  get url(): string {
    const { tls, user } = this.options;
    const login =
      user === undefined ? "" : `${encodeURIComponent(user.username)}:${encodeURIComponent(user.password)}@`;
    const security = tls === undefined ? "tls=false" : `tls=true&tlsCAFile=${encodeURIComponent(tls.caFile)}`;
    return `kurrentdb://${login}${this.host}:${this.port}?${security}`;
  }

  /**
   * As a secure node's authentication middleware: a call with credentials that are not the user's is refused
   * whatever it asks; one with none is refused where the user is needed (reads and appends), not for the
   * server's features or gossip. Undefined: let in.
   */
  private refusal(metadata: grpc.Metadata, userNeeded: boolean): Partial<grpc.StatusObject> | undefined {
    const user = this.options.user;
    if (user === undefined) return undefined;
    const given = metadata.get("authorization")[0];
    if (given === undefined) return userNeeded ? accessDenied() : undefined;
    const expected = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`;
    return given === expected ? undefined : UNAUTHENTICATED;
  }

  /** The next `count` appends are refused as during a leader election. */
  refuseAppends(reason: ElectionRefusal, count: number): void {
    this.refusals = { reason, left: count };
  }

  /** Ends every open subscription as the server does when it completes the call (a clean end). */
  endSubscriptions(): number {
    const n = this.subscriptions.size;
    for (const call of this.subscriptions) call.end();
    return n;
  }

  /** Fails every open subscription with UNAVAILABLE, as a node going away does. */
  dropSubscriptions(): number {
    const n = this.subscriptions.size;
    for (const call of this.subscriptions) call.emit("error", { code: grpc.status.UNAVAILABLE, details: "dropped" });
    return n;
  }

  get openSubscriptions(): number {
    return this.subscriptions.size;
  }

  async close(): Promise<void> {
    for (const call of this.subscriptions) call.end();
    // A client that spoke TLS to a plain stand-in (or the reverse) may leave a connection that never ends by itself.
    await new Promise<void>((resolve) => {
      const cut = setTimeout(resolve, 1_000);
      this.server.tryShutdown(() => {
        clearTimeout(cut);
        resolve();
      });
    });
    this.server.forceShutdown();
  }

  private async listen(): Promise<void> {
    this.server.addService(StreamsService, {
      read: (call: ReadCall) => this.read(call),
      batchAppend: (call: BatchCall) => this.batchAppend(call),
      append: (_call: unknown, done: grpc.sendUnaryData<never>) =>
        done({ code: grpc.status.UNIMPLEMENTED, details: "the stand-in serves BatchAppend" }),
      delete: (_call: unknown, done: grpc.sendUnaryData<never>) => done({ code: grpc.status.UNIMPLEMENTED }),
      tombstone: (_call: unknown, done: grpc.sendUnaryData<never>) => done({ code: grpc.status.UNIMPLEMENTED }),
    });
    if (this.options.version !== undefined) {
      const version = this.options.version;
      this.server.addService(ServerFeaturesService, {
        getSupportedMethods: (
          call: grpc.ServerUnaryCall<unknown, unknown>,
          done: grpc.sendUnaryData<FeaturesPb.SupportedMethods>,
        ) => {
          const refused = this.refusal(call.metadata, false);
          if (refused !== undefined) return void done(refused);
          const method = (name: string, ...features: string[]) =>
            new SupportedMethod()
              .setServiceName("event_store.client.streams.streams")
              .setMethodName(name)
              .setFeaturesList(features);
          const methods = [method("read", "position", "events"), method("batchappend", "deadline_duration")];
          done(null, new SupportedMethods().setMethodsList(methods).setEventStoreServerVersion(version));
        },
      });
    }
    this.server.addService(GossipService, {
      read: (call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<GossipPb.ClusterInfo>) => {
        const refused = this.refusal(call.metadata, false);
        if (refused !== undefined) return void done(refused);
        const member = (at: { host: string; port: number }, state: GossipPb.MemberInfo.VNodeState) =>
          new MemberInfo()
            .setInstanceId(structuredUuid(`00000000-0000-0000-0000-${String(at.port).padStart(12, "0")}`))
            .setTimeStamp(String(BigInt(Date.now()) * 10_000n))
            .setState(state)
            .setIsAlive(true)
            .setHttpEndPoint(new EndPoint().setAddress(at.host).setPort(at.port));
        const leader = this.options.leader;
        const members = leader
          ? [member(this.address, MemberInfo.VNodeState.FOLLOWER), member(leader, MemberInfo.VNodeState.LEADER)]
          : [member(this.address, MemberInfo.VNodeState.LEADER)];
        done(null, new ClusterInfo().setMembersList(members));
      },
    });
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`${this.host}:0`, this.credentials(), (err, port) => (err ? reject(err) : resolve(port))),
    );
    // Every small frame on the wire at once, as the server's Kestrel sends them: grpc-js leaves
    // Nagle on, and with the client's delayed acknowledgements each read would wait 40 ms.
    const servers = (this.server as unknown as { http2Servers: Map<NetServer, unknown> }).http2Servers;
    for (const server of servers.keys()) server.on("connection", (socket: Socket) => socket.setNoDelay(true));
  }

  private credentials(): grpc.ServerCredentials {
    const tls = this.options.tls;
    if (tls === undefined) return grpc.ServerCredentials.createInsecure();
    return grpc.ServerCredentials.createSsl(null, [
      { cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) },
    ]);
  }

  private read(call: ReadCall): void {
    const refused = this.refusal(call.metadata, true);
    if (refused !== undefined) return void call.emit("error", refused);
    const options = call.request.getOptions()!;
    const leaderOnly = call.metadata.get("requires-leader")[0] === "true";
    if (leaderOnly && this.options.leader) return void call.emit("error", notLeader(this.options.leader));
    const structured = options.getUuidOption()?.hasStructured() ?? false;
    const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
    const matches = filterOf(options);
    if (options.getCountOptionCase() === ReadReq.Options.CountOptionCase.SUBSCRIPTION)
      return this.subscribe(call, matches, structured);
    const count = Number(options.getCount());
    let events: Iterable<StandInEvent>;
    if (options.hasStream()) {
      const s = options.getStream()!;
      const name = Buffer.from(s.getStreamIdentifier()!.getStreamName_asU8()).toString("utf8");
      const stored = this.log.stream(name);
      if (stored === undefined) {
        call.write(new ReadResp().setStreamNotFound(new ReadResp.StreamNotFound().setStreamIdentifier(streamId(name))));
        return void call.end();
      }
      const Rev = ReadReq.Options.StreamOptions.RevisionOptionCase;
      const at = s.getRevisionOptionCase() === Rev.REVISION ? Number(s.getRevision()) : undefined;
      events = backwards
        ? stored.filter((e) => at === undefined || e.revision <= at).reverse()
        : stored.filter((e) => e.revision >= (at ?? 0));
    } else {
      const all = options.getAll()!;
      const Pos = ReadReq.Options.AllOptions.AllOptionCase;
      const at = all.getAllOptionCase() === Pos.POSITION ? BigInt(all.getPosition()!.getCommitPosition()) : undefined;
      const fromEnd = all.getAllOptionCase() === Pos.END;
      // Forwards from a position includes the event there; backwards from one excludes it.
      const first = at === undefined ? (fromEnd ? this.log.events.length : 0) : this.log.indexAfter(at - 1n);
      events = backwards
        ? this.log.backwardsFrom(fromEnd || at === undefined ? this.log.events.length : first, matches)
        : this.log.forwardsFrom(first, matches);
    }
    let sent = 0;
    for (const e of events) {
      if (sent++ >= count) break;
      call.write(eventResp(e, structured));
    }
    call.end();
  }

  /** Confirmation, every matching event after the start (exclusive), caught-up, then live ones. */
  private subscribe(call: ReadCall, matches: (e: StandInEvent) => boolean, structured: boolean): void {
    const all = call.request.getOptions()!.getAll()!;
    const Pos = ReadReq.Options.AllOptions.AllOptionCase;
    let index =
      all.getAllOptionCase() === Pos.END
        ? this.log.events.length
        : all.getAllOptionCase() === Pos.POSITION
          ? this.log.indexAfter(BigInt(all.getPosition()!.getCommitPosition()))
          : 0;
    this.subscriptions.add(call);
    call.write(new ReadResp().setConfirmation(new ReadResp.SubscriptionConfirmation().setSubscriptionId("stand-in")));
    const pump = () => {
      for (; index < this.log.events.length; index++) {
        const e = this.log.events[index]!;
        if (matches(e)) call.write(eventResp(e, structured));
      }
    };
    pump();
    call.write(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()));
    const off = this.log.onAppend(pump);
    const close = () => {
      off();
      this.subscriptions.delete(call);
    };
    call.on("cancelled", close);
    call.on("finish", close);
    call.on("error", close);
  }

  private batchAppend(call: BatchCall): void {
    const refused = this.refusal(call.metadata, true);
    if (refused !== undefined) return void call.emit("error", refused);
    const pending = new Map<
      string,
      { options: StreamsPb.BatchAppendReq.Options; messages: StreamsPb.BatchAppendReq.ProposedMessage[] }
    >();
    call.on("data", (req: StreamsPb.BatchAppendReq) => {
      const correlation = uuidString(req.getCorrelationId());
      const entry = pending.get(correlation) ?? { options: req.getOptions()!, messages: [] };
      entry.messages.push(...req.getProposedMessagesList());
      pending.set(correlation, entry);
      if (!req.getIsFinal()) return;
      pending.delete(correlation);
      if (this.options.leader) return void call.emit("error", notLeader(this.options.leader));
      const stream = Buffer.from(entry.options.getStreamIdentifier()!.getStreamName_asU8()).toString("utf8");
      const resp = new BatchAppendResp().setCorrelationId(req.getCorrelationId()).setStreamIdentifier(streamId(stream));
      const expected = expectedOf(entry.options);
      this.appendAttempts.push({ stream, ids: entry.messages.map((m) => uuidString(m.getId())), expected });
      if (this.refusals !== undefined && this.refusals.left > 0) {
        this.refusals.left--;
        const empty = new Empty().serializeBinary();
        return void call.write(resp.setError(statusOf(this.refusals.reason, "google.protobuf.Empty", empty)));
      }
      const outcome = this.log.append(
        stream,
        entry.messages.map((m) => ({
          id: uuidString(m.getId()),
          type: m.getMetadataMap().get("type") ?? "",
          contentType: m.getMetadataMap().get("content-type") ?? "application/octet-stream",
          data: m.getData_asU8(),
          metadata: m.getCustomMetadata_asU8(),
        })),
        expected,
      );
      if (!outcome.ok) {
        const wrong = new Shared.WrongExpectedVersion();
        if (outcome.actual === -1) wrong.setCurrentNoStream(new Empty());
        else wrong.setCurrentStreamRevision(String(outcome.actual));
        if (typeof expected === "number") wrong.setExpectedStreamPosition(String(expected));
        else if (expected === "no_stream") wrong.setExpectedNoStream(new Empty());
        else if (expected === "stream_exists") wrong.setExpectedStreamExists(new Empty());
        else wrong.setExpectedAny(new Empty());
        const status = statusOf(
          "WrongExpectedVersion",
          "event_store.client.WrongExpectedVersion",
          wrong.serializeBinary(),
        );
        return void call.write(resp.setError(status));
      }
      const success = new BatchAppendResp.Success().setCurrentRevision(String(outcome.revision));
      if (outcome.position === undefined) success.setNoPosition(new Empty());
      else
        success.setPosition(
          new Shared.AllStreamPosition()
            .setCommitPosition(String(outcome.position))
            .setPreparePosition(String(outcome.position)),
        );
      call.write(resp.setSuccess(success));
    });
    call.on("end", () => call.end());
  }
}
