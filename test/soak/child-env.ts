/**
 * This process's environment without its TypeScript loader: the children run compiled Shoal. Its API on plain HTTP:
 * the soak reads it with fetch, and the API's TLS is tested elsewhere (test/e2e/api-tls.test.ts).
 */
export function childEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SHOAL_API_TLS_DISABLE: "true",
    SHOAL_ORCHESTRATOR_NATS_TLS_DISABLE: "true",
    ...extra,
  };
  delete env.NODE_OPTIONS;
  return env;
}
