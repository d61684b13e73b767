/**
 * Flat config keys (`API.Auth.Users`) as nested objects (`{API: {Auth: {Users: …}}}`): the shape of Bacalhau's
 * `types.Bacalhau`, which its `agent config` prints and its clients read.
 */
export function nestedConfig(flat: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) {
    const path = key.split(".");
    let node = root;
    for (const part of path.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[path.at(-1)!] = value;
  }
  return root;
}
