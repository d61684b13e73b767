import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { canonicalKey } from "../../src/config/keys.ts";

const root = join(import.meta.dirname, "../..");
const compose = parse(readFileSync(join(root, "docker-compose.yml"), "utf8")) as {
  services: Record<
    string,
    {
      image?: string;
      build?: string;
      command?: string[];
      environment?: Record<string, string>;
      depends_on?: string[];
      volumes?: string[];
      ports?: string[];
      hostname?: string;
    }
  >;
  volumes: Record<string, unknown>;
};

describe("docker-compose.yml", () => {
  it("has KurrentDB, an orchestrator running its own locked-down NATS, and two compute nodes joining with one token", () => {
    const s = compose.services;
    expect(Object.keys(s).sort()).toEqual(["compute-1", "compute-2", "kurrentdb", "orchestrator"]);
    // 22.10 or later: the adapter refuses older servers at open.
    const [major, minor] = s.kurrentdb!.image!.match(/^docker\.kurrent\.io\/[\w-]+\/kurrentdb:(\d+)\.(\d+)/)!.slice(1);
    expect(Number(major) * 100 + Number(minor)).toBeGreaterThanOrEqual(2210);
    expect(s.orchestrator!.command).toEqual(["serve"]);
    // No open NATS: the orchestrator's embedded server, with the join token from the environment.
    expect(s.orchestrator!.environment).not.toHaveProperty("SHOAL_ORCHESTRATOR_NATS_URL");
    const token = s.orchestrator!.environment!.SHOAL_ORCHESTRATOR_AUTH_TOKEN;
    expect(token).toMatch(/^\$\{SHOAL_JOIN_TOKEN:\?/);
    for (const c of ["compute-1", "compute-2"]) expect(s[c]!.environment!.SHOAL_COMPUTE_AUTH_TOKEN).toBe(token);
    expect(s["compute-1"]!.command?.[0]).toBe("compute");
  });

  it("publishes no KurrentDB port: it runs insecure, and only the orchestrator may write to it", () => {
    expect(compose.services.kurrentdb!.environment!.KURRENTDB_INSECURE).toBe("true");
    expect(compose.services.kurrentdb!.ports ?? []).toEqual([]);
    expect(compose.services.kurrentdb).not.toHaveProperty("network_mode");
  });

  it("references only what exists: build context, Dockerfile sources, services, volumes and config keys", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    // COPY from the build context (not --from another stage) names files that exist.
    for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm))
      for (const src of m[1]!.split(" ")) expect(existsSync(join(root, src)), src).toBe(true);
    for (const [name, service] of Object.entries(compose.services)) {
      if (service.build) expect(existsSync(join(root, service.build, "Dockerfile")), name).toBe(true);
      for (const dep of service.depends_on ?? [])
        expect(compose.services, `${name} depends on ${dep}`).toHaveProperty(dep);
      for (const v of service.volumes ?? []) {
        // A file of the operator's (the CA copied out of the orchestrator), given read-only.
        if (v.startsWith("./")) expect(v, name).toMatch(/:ro$/);
        else expect(compose.volumes, v).toHaveProperty(v.split(":")[0]!);
      }
      for (const env of Object.keys(service.environment ?? {})) {
        if (!env.startsWith("SHOAL_")) continue;
        expect(canonicalKey(env.slice(6).replaceAll("_", ".")), `${name}: ${env}`).toBeDefined();
      }
    }
    const orch = compose.services.orchestrator!.environment!;
    expect(new URL(orch.SHOAL_EVENTSTORE_URL!).hostname).toBe("kurrentdb");
    expect(new URL(compose.services["compute-1"]!.environment!.SHOAL_COMPUTE_ORCHESTRATORS!).hostname).toBe(
      "orchestrator",
    );
    // NATS speaks TLS: the nodes dial a name the generated certificate covers (the host name) and trust its CA.
    expect(compose.services.orchestrator!.hostname).toBe("orchestrator");
    for (const c of ["compute-1", "compute-2"]) {
      const ca = compose.services[c]!.environment!.SHOAL_COMPUTE_TLS_CACERT!;
      expect(compose.services[c]!.volumes).toContain(`./shoal-ca.crt:${ca}:ro`);
    }
  });

  it("builds the image in a stage and runs node on the compiled CLI with production dependencies only", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const runtime = stages.at(-1)!;
    expect(stages.slice(0, -1).join("")).toMatch(/^RUN npm run build/m);
    expect(stages.slice(0, -1).join("")).toMatch(/npm prune --omit=dev/);
    expect(runtime).toMatch(/^COPY --from=\S+ \/app\/dist \.\/dist$/m);
    expect(runtime).toMatch(/^COPY --from=\S+ \/app\/node_modules \.\/node_modules$/m);
    // The runtime stage neither has the sources nor a TypeScript loader.
    expect(runtime).not.toMatch(/COPY (src|machines) /);
    expect(dockerfile).not.toMatch(/tsx/);
    expect(runtime).toMatch(/^ENTRYPOINT \["node", "\/app\/bin\/shoal"\]$/m);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.dependencies)).not.toContain("tsx");
    expect(Object.keys(pkg.dependencies)).not.toContain("typescript");
  });
});
