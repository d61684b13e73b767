import { isIP } from "node:net";
import tls, { type ConnectionOptions } from "node:tls";

/**
 * TLS options as they should reach node:tls: without a `servername` that is an IP address. SNI carries host names
 * only (RFC 6066, section 3); Node warns for an IP there (DEP0123) and will ignore it. The server's certificate is
 * checked against `host` instead (its IP SANs), as it was against that same IP.
 */
export function withoutIpServername<T extends ConnectionOptions>(options: T): T {
  const name = options.servername;
  if (name === undefined || isIP(name) === 0) return options;
  const { servername: _ip, ...rest } = options;
  return rest as T;
}

let installed = false;

/**
 * Has this process's TLS connections leave out a servername that is an IP (withoutIpServername). The KurrentDB
 * client's gRPC half (grpc-js) sets the servername to whatever host EventStore.URL names, an IP too, and takes no TLS
 * options of ours; it reads node:tls's `connect` at each connection, so the options are mended here.
 */
export function leaveOutIpServernames(): void {
  if (installed) return;
  installed = true;
  const connect = tls.connect;
  tls.connect = function connectWithoutIpServername(this: unknown, ...args: unknown[]) {
    // connect(options, …) or connect(port, host, options, …): the options are the first object.
    const at = args.findIndex((a) => typeof a === "object" && a !== null);
    if (at !== -1) args[at] = withoutIpServername(args[at] as ConnectionOptions);
    return Reflect.apply(connect, this, args) as tls.TLSSocket;
  } as typeof tls.connect;
}
