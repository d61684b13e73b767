import { BlockList, isIP } from "node:net";

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6"); // also matches ::ffff:127.x.x.x and 0:0:…:1

/**
 * Whether a host names this machine by its loopback interface: 127.0.0.0/8, ::1 or localhost.
 * Any other name or address may be another box, however local it looks.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .replace(/^\[(.*)\]$/, "$1")
    .toLowerCase();
  if (h === "localhost" || h === "localhost.") return true;
  const family = isIP(h);
  return family === 4 ? LOOPBACK.check(h, "ipv4") : family === 6 ? LOOPBACK.check(h, "ipv6") : false;
}
