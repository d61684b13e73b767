/**
 * The KurrentDB stand-in (test/support/kurrent-stand-in/, a test double holding the log in memory) in a process of its
 * own, so that the orchestrators' store does not share the load generator's event loop.
 *
 *   node --import tsx bench/support/kurrent-stand-in-child.ts
 *
 * Prints its URL (`kurrentdb://…`) once it listens; SIGTERM closes it.
 */
import { KurrentStandIn } from "../../test/support/kurrent-stand-in/kurrent-stand-in.ts";

const standIn = await KurrentStandIn.start();
console.log(`listening ${standIn.url}`);
process.once("SIGTERM", () => void standIn.close().then(() => process.exit(0)));
