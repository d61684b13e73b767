/**
 * The KurrentDB stand-in as a process of its own, as the real server is to the orchestrators that share it: it prints
 * `listening <connection string>` once it serves, and serves until killed.
 *
 *   node --import tsx test/support/kurrent-stand-in/stand-in-main.ts
 */
import { KurrentStandIn } from "./kurrent-stand-in.ts";

const standIn = await KurrentStandIn.start();
console.log(`listening ${standIn.url}`);
process.once("SIGTERM", () => void standIn.close().then(() => process.exit(0)));
