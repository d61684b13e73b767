/**
 * The command line's name for each query parameter the CLI fills from it, whatever the command: the API names the
 * parameter it refuses, the user knows the flag (or argument) they typed.
 */
const FLAG_OF_PARAMETER: Readonly<Record<string, string>> = {
  as_of: "--as-of",
  at_position: "--at-position",
  since: "--since",
  until: "--until",
  after: "--after",
  category: "--category",
  entity: "--entity",
  type: "--type",
  actor: "--actor",
  node: "--node",
  limit: "--limit",
  next_token: "--next-token",
  order_by: "--order-by",
  labels: "--labels",
  namespace: "--namespace",
  event_type: "--event-type",
  execution_id: "--execution-id",
  "filter-approval": "--filter-approval",
  "filter-status": "--filter-status",
  "filter-drain": "--filter-drain",
  "filter-cordoned": "--filter-cordoned",
  // shoal audit diff FROM TO
  from: "FROM",
  to: "TO",
};

const ONE_PARAMETER = /^query parameter ([a-z_-]+): /;
const INVALID_QUERY = "invalid query: ";

interface Issue {
  readonly path: string;
  readonly message: string;
}

/**
 * The API's refusal of a request to `path` in the CLI's terms: "query parameter as_of: …" becomes "--as-of: …" (and
 * each problem of an "invalid query: …" the same way) when the request sent that parameter. Anything else is left
 * as the API said it.
 */
export function inFlagTerms(message: string, body: unknown, path: string): string {
  const query = path.indexOf("?");
  if (query === -1) return message;
  const sent = new URLSearchParams(path.slice(query + 1));
  const flagOf = (name: string) =>
    Object.hasOwn(FLAG_OF_PARAMETER, name) && sent.has(name) ? FLAG_OF_PARAMETER[name] : undefined;
  const one = ONE_PARAMETER.exec(message);
  if (one !== null) {
    const flag = flagOf(one[1] as string);
    return flag === undefined ? message : `${flag}: ${message.slice(one[0].length)}`;
  }
  const issues = (body as { Details?: { issues?: readonly Issue[] } } | undefined)?.Details?.issues;
  if (!message.startsWith(INVALID_QUERY) || !Array.isArray(issues) || issues.length === 0) return message;
  const flags = issues.map((i) => flagOf(i.path));
  if (flags.some((f) => f === undefined)) return message;
  return issues.map((i, k) => `${flags[k]}: ${i.message}`).join("; ");
}
