import { spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConnectionString } from "@kurrent/kurrentdb-client/dist/Client/parseConnectionString.js";
import { describe, expect, it } from "vitest";
import { parseAuthUsers } from "../../src/config/auth-users.ts";
import { commonNameOf, readPair } from "../../src/security/tls/certificate-pair.ts";
import { KURRENTDB_NODE_COMMON_NAME } from "../../src/security/tls/issued-tls-files.ts";
import { CONFIG_KEYS, canonicalKey, type ConfigKey } from "../../src/config/keys.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import {
  EVENTS_READER_PERMISSIONS,
  EVENTS_READER_USER,
  ORCHESTRATOR_PERMISSIONS,
  ORCHESTRATOR_USER,
  nodePermissions,
} from "../../src/transport/nats-auth/nats-roles.ts";
import { LOGIN_TIMEOUT_SECONDS } from "../../src/transport/nats-auth/nats-server-config.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { natsServerUrls } from "../../src/transport/nats-server-urls.ts";
import {
  compose,
  dependencies,
  interpolate,
  natsConfigFile,
  nkeyVariable,
  repoRoot as root,
  serviceEnv,
} from "../support/compose-file.ts";
import { tempDir } from "../support/fixtures.ts";
import { SHOAL_BIN } from "../support/shoal-process.ts";

const { services } = compose;
const named = (prefix: string) => Object.keys(services).filter((n) => n.startsWith(`${prefix}-`));
const kurrentdbs = named("kurrentdb");
const natsServers = named("nats");
const orchestrators = named("orchestrator");
const computes = named("compute");
const env = (name: string) => services[name]!.environment!;
/** A variable compose must be given: `${NAME:?message}`, read at `docker compose` time. */
const REQUIRED = /\$\{(\w+):\?[^}]*\}/;
const secrets = (names: string[]) =>
  Object.fromEntries(names.map((n, i) => [n, `${n.toLowerCase()}-${"s3cret".repeat(5)}-${i}`]));
const hostVars = secrets([
  "SHOAL_JOIN_TOKEN",
  "SHOAL_API_KEY",
  "SHOAL_NATS_PASSWORD",
  "SHOAL_EVENTS_READER_PASSWORD",
  "SHOAL_KURRENTDB_PASSWORD",
  "SHOAL_KURRENTDB_OPS_PASSWORD",
]);
/** The config a Shoal service runs with, loaded by Shoal's own loader from its environment. */
const configOf = (name: string) => loadConfig({ env: serviceEnv(name, hostVars) });
/**
 * tls-init's script run here once, each named volume a directory, with bin/shoal for the image's: what each service
 * finds at a path of its mounts afterwards, and a NATS config whose files are those.
 */
const tlsInit = (() => {
  let done: ReturnType<typeof runTlsInit> | undefined;
  return () => (done ??= runTlsInit());
})();

function runTlsInit() {
  const volumes = tempDir("shoal-compose-volumes-");
  const mountOf = (service: string, path: string) => {
    for (const v of services[service]!.volumes ?? []) {
      const [source, target] = v.split(":") as [string, string];
      if (path === target || path.startsWith(`${target}/`)) return { source, target };
    }
    throw new Error(`${service} mounts nothing at ${path}`);
  };
  const hostPath = (service: string, path: string) => {
    const { source, target } = mountOf(service, path);
    const dir = source.startsWith("./") ? join(root, source) : join(volumes, source);
    mkdirSync(dir, { recursive: true });
    return join(dir, path.slice(target.length));
  };
  const init = services["tls-init"]!;
  expect(init.entrypoint).toEqual(["/bin/sh", "-ec"]);
  let script = init.command![0]!.replace(/^node \/app\/bin\/shoal /, `${SHOAL_BIN} `);
  for (const v of init.volumes!) {
    const target = v.split(":")[1]!;
    script = script.replaceAll(new RegExp(`(?<=\\s)${target}(?=/|\\s|$)`, "g"), hostPath("tls-init", target));
  }
  const run = spawnSync("/bin/sh", ["-ec", script], { encoding: "utf8" });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return {
    hostPath,
    volumeAt: (service: string, path: string) => mountOf(service, path).source,
    /** The server's config in a directory of its own with authorization.conf, its TLS files where tls-init put them. */
    runnableConfig(name: string): string {
      const dir = join(volumes, `conf-${name}`);
      mkdirSync(dir, { recursive: true });
      copyFileSync(join(natsConfigFile(name), "../authorization.conf"), join(dir, "authorization.conf"));
      const conf = readFileSync(natsConfigFile(name), "utf8").replace(
        /^(\s*(?:cert|key|ca)_file: )(\S+)$/gm,
        (_, key: string, path: string) => `${key}${JSON.stringify(hostPath(name, path))}`,
      );
      writeFileSync(join(dir, `${name}.conf`), conf);
      return join(dir, `${name}.conf`);
    },
  };
}

const nodeIdOf = (name: string) => services[name]!.command![services[name]!.command!.indexOf("--node-id") + 1]!;

describe("docker-compose.yml", () => {
  it("runs three KurrentDB nodes (22.10 or later), three NATS servers, three orchestrators and two compute nodes", () => {
    expect(kurrentdbs).toHaveLength(3);
    expect(natsServers).toHaveLength(3);
    expect(orchestrators).toHaveLength(3);
    expect(computes).toHaveLength(2);
    // And tls-init, which makes the NATS servers' certificates.
    expect(Object.keys(services)).toHaveLength(12);
    for (const name of kurrentdbs) {
      // The adapter refuses older servers at open.
      const m = services[name]!.image!.match(/^docker\.kurrent\.io\/[\w-]+\/kurrentdb:(\d+)\.(\d+)/)!;
      expect(Number(m[1]) * 100 + Number(m[2]), name).toBeGreaterThanOrEqual(2210);
    }
    for (const name of orchestrators) expect(services[name]!.command).toEqual(["serve"]);
    for (const name of computes) expect(services[name]!.command?.[0]).toBe("compute");
  });

  it("clusters the KurrentDB nodes by gossip seeds naming the other two, and publishes none of them", () => {
    for (const name of kurrentdbs) {
      const e = env(name);
      expect(e.KURRENTDB_CLUSTER_SIZE, name).toBe("3");
      // DNS discovery is the server's default; on a compose network no name lists all three.
      expect(e.KURRENTDB_DISCOVER_VIA_DNS, name).toBe("false");
      const seeds = e.KURRENTDB_GOSSIP_SEED!.split(",").sort();
      expect(seeds, name).toEqual(kurrentdbs.filter((n) => n !== name).map((n) => `${n}:2113`));
      // Secure (TLS, users): the default. Still reached on the compose network only.
      expect(e, name).not.toHaveProperty("KURRENTDB_INSECURE");
      expect(services[name]!.ports ?? [], name).toEqual([]);
      expect(services[name], name).not.toHaveProperty("network_mode");
    }
  });

  it("runs every orchestrator in cluster mode on all three KurrentDB nodes and all three NATS servers", () => {
    const natsUrls = natsServers.map((n) => `nats://${n}:4222`);
    const apiPorts = new Set<string>();
    for (const name of orchestrators) {
      const config = configOf(name);
      expect(config["Orchestrator.Cluster.Enabled"], name).toBe(true);
      expect(config.NodeID, name).toBe(name);
      const store = parseConnectionString(config["EventStore.URL"]);
      expect(store.dnsDiscover, name).toBe(false);
      expect(store.hosts.map((h) => `${h.address}:${h.port}`).sort(), name).toEqual(kurrentdbs.map((n) => `${n}:2113`));
      expect(store.tls, name).toBe(true);
      expect(natsServerUrls(config["Orchestrator.NATS.URL"]).sort(), name).toEqual(natsUrls);
      expect(config["Orchestrator.NATS.User"], name).toBe(ORCHESTRATOR_USER);
      // The lease bucket is replicated on every server.
      expect(config["Orchestrator.Cluster.Replicas"], name).toBe(natsServers.length);
      expect(
        config["API.Auth.Users"].map((u) => u.Capabilities),
        name,
      ).toEqual([[{ Actions: ["*"] }]]);
      const published = services[name]!.ports ?? [];
      for (const p of published) apiPorts.add(p.split(":")[0]!);
      expect(
        published.map((p) => p.split(":")[1]),
        name,
      ).toEqual(["1234"]);
    }
    expect(apiPorts.size).toBe(orchestrators.length);
    for (const name of computes) {
      expect(configOf(name)["Compute.Orchestrators"].sort(), name).toEqual(natsUrls);
      expect(dependencies(services[name]!).sort(), name).toEqual(natsServers);
    }
  });

  it("takes every secret from a variable compose requires, the same one wherever it is shared", () => {
    const shoal = [...orchestrators, ...computes];
    for (const name of shoal) {
      for (const [variable, value] of Object.entries(env(name))) {
        const key = canonicalKey(variable.slice("SHOAL_".length).replaceAll("_", "."));
        if (key === undefined || CONFIG_KEYS[key as ConfigKey].secret !== true) continue;
        expect(() => interpolate(value, {}), `${name}: ${variable}`).toThrow(/required variable SHOAL_\w+ is missing/);
        if (CONFIG_KEYS[key as ConfigKey].kind === "string")
          expect(value, `${name}: ${variable}`).toMatch(/^\$\{\w+:\?[^}]*\}$/);
      }
    }
    const orchestratorVars = (variable: string) => [...new Set(orchestrators.map((n) => env(n)[variable]))];
    expect(orchestratorVars("SHOAL_ORCHESTRATOR_AUTH_TOKEN")).toHaveLength(1);
    expect(orchestratorVars("SHOAL_API_AUTH_USERS")).toHaveLength(1);
    for (const name of computes)
      expect(env(name).SHOAL_COMPUTE_AUTH_TOKEN).toBe(orchestratorVars("SHOAL_ORCHESTRATOR_AUTH_TOKEN")[0]);
    // The admin's API key is the variable's value, not a key in the file.
    const users = parseAuthUsers(interpolate(orchestratorVars("SHOAL_API_AUTH_USERS")[0]!, hostVars), "env", "users");
    expect(users.map((u) => u.APIKey)).toEqual([hostVars.SHOAL_API_KEY]);
    // The NATS servers check the password the orchestrators log in with, quoted: nats-server reads a variable's
    // value as config, and takes it whole as a string only when quoted.
    expect(orchestratorVars("SHOAL_ORCHESTRATOR_NATS_PASSWORD")).toHaveLength(1);
    const natsPassword = configOf(orchestrators[0]!)["Orchestrator.NATS.Password"];
    for (const name of natsServers) {
      const served = serviceEnv(name, hostVars);
      expect(served.ORCHESTRATOR_PASSWORD, name).toBe(`"${natsPassword}"`);
      expect(served.EVENTS_READER_PASSWORD, name).toBe(`"${hostVars.SHOAL_EVENTS_READER_PASSWORD}"`);
      for (const v of ["ORCHESTRATOR_PASSWORD", "EVENTS_READER_PASSWORD"])
        expect(env(name)[v], `${name}: ${v}`).toMatch(REQUIRED);
    }
  });

  describe("the NATS servers' configs (deploy/nats)", () => {
    const text = (file: string) =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => !l.trim().startsWith("#"))
        .join("\n");
    const field = (conf: string, name: string) => conf.match(new RegExp(`^\\s*${name}:\\s*(\\S+)$`, "m"))?.[1];

    it("form one cluster with JetStream: each its own name and store, routes to all three", () => {
      const clusterNames = new Set<string>();
      for (const name of natsServers) {
        const conf = text(natsConfigFile(name));
        expect(field(conf, "server_name"), name).toBe(name);
        expect(field(conf, "listen"), name).toBe("0.0.0.0:4222");
        const jetstream = conf.match(/^jetstream \{([^}]*)\}/m)![1]!;
        // JetStream's files are in the server's own volume.
        const storeDir = field(jetstream, "store_dir")!;
        expect(services[name]!.volumes, name).toContain(`${name}-data:${storeDir}`);
        const cluster = conf.match(/^cluster \{([\s\S]*?)^\}/m)![1]!;
        clusterNames.add(field(cluster, "name")!);
        expect(field(cluster, "listen"), name).toBe("0.0.0.0:6222");
        const routes = [...cluster.matchAll(/nats:\/\/([\w-]+):6222/g)].map((m) => m[1]).sort();
        expect(routes, name).toEqual(natsServers);
        expect(conf, name).toMatch(/^include \.\/authorization\.conf$/m);
        // The cluster port is for the servers only.
        expect(
          services[name]!.ports?.map((p) => p.split(":")[1]),
          name,
        ).toEqual(["4222"]);
      }
      expect(clusterNames.size).toBe(1);
    });

    it("give the orchestrator, event readers and each compute node the permissions Shoal's own server gives them", () => {
      const files = new Set(natsServers.map((n) => join(natsConfigFile(n), "../authorization.conf")));
      expect(files.size).toBe(1);
      // JSON but for the variables, which nats-server reads from its environment.
      const conf = text([...files][0]!).replace(/^authorization:/m, "");
      const auth = JSON.parse(conf.replace(/: \$(\w+)/g, ': "$$$1"')) as {
        timeout: number;
        users: { user?: string; password?: string; nkey?: string; permissions: unknown }[];
      };
      expect(auth.timeout).toBe(LOGIN_TIMEOUT_SECONDS);
      // Each server's COMPUTE_1_NKEY is what the shell running compose has in SHOAL_COMPUTE_1_NKEY.
      const nkeyVars = computes.map((n) => nkeyVariable(n).slice("SHOAL_".length));
      for (const name of natsServers)
        computes.forEach((n, i) => expect(env(name)[nkeyVars[i]!], name).toBe(`\${${nkeyVariable(n)}:-}`));
      expect(auth.users).toEqual([
        { user: ORCHESTRATOR_USER, password: "$ORCHESTRATOR_PASSWORD", permissions: ORCHESTRATOR_PERMISSIONS },
        { user: EVENTS_READER_USER, password: "$EVENTS_READER_PASSWORD", permissions: EVENTS_READER_PERMISSIONS },
        ...computes.map((n, i) => ({ nkey: `$${nkeyVars[i]}`, permissions: nodePermissions(nodeIdOf(n)) })),
      ]);
      for (const name of natsServers)
        for (const v of auth.users.map((u) => u.password ?? u.nkey!))
          expect(env(name), `${name}: ${v}`).toHaveProperty(v.slice(1));
    });

    it("are accepted by a real nats-server, with the variables compose passes each server and tls-init's files", () => {
      const keys = Object.fromEntries(computes.map((n) => [nkeyVariable(n), newNkey("user").publicKey]));
      for (const name of natsServers) {
        const check = spawnSync("nats-server", ["-t", "-c", tlsInit().runnableConfig(name)], {
          env: { PATH: process.env.PATH, ...serviceEnv(name, { ...hostVars, ...keys }) },
          encoding: "utf8",
        });
        expect(check.stderr, name).toContain("is valid");
        expect(check.status, name).toBe(0);
      }
    });
  });

  describe("TLS: tls-init's certificates for the NATS servers, which the orchestrators and compute nodes trust", () => {
    it("runs tls-init before the NATS servers; only tls-init holds the CA's key", () => {
      for (const name of natsServers)
        expect(services[name]!.depends_on, name).toEqual({
          "tls-init": { condition: "service_completed_successfully" },
        });
      const caVolume = tlsInit().volumeAt("tls-init", "/tls-ca");
      for (const [name, service] of Object.entries(services))
        if (name !== "tls-init")
          expect(service.volumes ?? [], name).not.toContainEqual(expect.stringMatching(`^${caVolume}:`));
      for (const name of [...natsServers, ...orchestrators, ...computes])
        expect(readdirSync(tlsInit().hostPath(name, "/tls")), name).not.toContain("ca.key");
    });

    it("serves each NATS server's client port and routes with its own certificate, for its service name", () => {
      for (const name of natsServers) {
        const conf = readFileSync(natsConfigFile(name), "utf8");
        const blocks = [...conf.matchAll(/^\s*tls \{([^}]*)\}/gm)].map((m) => m[1]!);
        // The client port's, then the routes' inside cluster {}.
        expect(blocks, name).toHaveLength(2);
        for (const block of blocks) {
          const file = (key: string) => tlsInit().hostPath(name, block.match(new RegExp(`${key}: (\\S+)`))![1]!);
          const cert = new X509Certificate(readFileSync(file("cert_file")));
          expect(cert.checkHost(name), name).toBe(name);
          expect(cert.checkIssued(new X509Certificate(readFileSync(file("ca_file")))), name).toBe(true);
          expect(existsSync(file("key_file")), name).toBe(true);
          expect(block, name).not.toMatch(/verify/);
          expect(block, name).toMatch(/timeout: 10\n/);
        }
      }
    });

    it("has the orchestrators and compute nodes trust the CA that signed the NATS servers' certificates", () => {
      const served = new X509Certificate(readFileSync(tlsInit().hostPath("nats-1", "/tls/nats-1.crt")));
      const trusted = [
        ...orchestrators.map((n) => [n, configOf(n)["Orchestrator.NATS.TLS.CACert"]] as const),
        ...computes.map((n) => [n, configOf(n)["Compute.TLS.CACert"]] as const),
      ];
      for (const [name, file] of trusted)
        expect(served.checkIssued(new X509Certificate(readFileSync(tlsInit().hostPath(name, file)))), name).toBe(true);
    });
  });

  describe("TLS: tls-init's certificates for the KurrentDB nodes, which the orchestrators trust and log in to", () => {
    const nodeFile = (name: string, variable: string) => tlsInit().hostPath(name, env(name)[variable]!);

    it("runs each node secure on its own certificate, for the name it is dialled and gossips by, trusting the CA", () => {
      const certificates = kurrentdbs.map((name) => {
        expect(services[name]!.depends_on, name).toEqual({
          "tls-init": { condition: "service_completed_successfully" },
        });
        // KurrentDB takes every certificate file in this directory as a trusted root: the CA's alone.
        const roots = nodeFile(name, "KURRENTDB_TRUSTED_ROOT_CERTIFICATES_PATH");
        expect(readdirSync(roots), name).toEqual(["ca.crt"]);
        const ca = new X509Certificate(readFileSync(join(roots, "ca.crt")));
        const keyPath = nodeFile(name, "KURRENTDB_CERTIFICATE_PRIVATE_KEY_FILE");
        const pair = readPair(nodeFile(name, "KURRENTDB_CERTIFICATE_FILE"), keyPath)!;
        expect(pair.certificate.checkIssued(ca) && pair.certificate.verify(ca.publicKey), name).toBe(true);
        // The seeds and the orchestrators dial it by its service name, and it gossips under that name.
        expect(env(name).KURRENTDB_NODE_HOST_ADVERTISE_AS, name).toBe(name);
        expect(pair.certificate.checkHost(name), name).toBe(name);
        expect(pair.key.asymmetricKeyType, name).toBe("rsa");
        // The image runs as user 1001: the key is its alone.
        const key = statSync(keyPath);
        expect([key.uid, key.mode & 0o777], name).toEqual([1001, 0o600]);
        expect(readdirSync(tlsInit().hostPath(name, "/tls")), name).not.toContain("ca.key");
        return pair.certificate;
      });
      // A node lets in only nodes whose certificate has the common name of its own.
      expect(new Set(certificates.map(commonNameOf))).toEqual(new Set([KURRENTDB_NODE_COMMON_NAME]));
    });

    it("has every orchestrator dial them over TLS trusting tls-init's CA, as admin with the nodes' admin password", () => {
      const served = new X509Certificate(readFileSync(nodeFile(kurrentdbs[0]!, "KURRENTDB_CERTIFICATE_FILE")));
      const adminPasswords = new Set(kurrentdbs.map((n) => serviceEnv(n, hostVars).KURRENTDB_DEFAULT_ADMIN_PASSWORD));
      expect(adminPasswords).toEqual(new Set([hostVars.SHOAL_KURRENTDB_PASSWORD]));
      for (const name of orchestrators) {
        const store = parseConnectionString(configOf(name)["EventStore.URL"]);
        expect([store.tls, store.tlsVerifyCert ?? true], name).toEqual([true, true]);
        const trusted = new X509Certificate(readFileSync(tlsInit().hostPath(name, store.tlsCAFile!)));
        expect(served.checkIssued(trusted), name).toBe(true);
        expect(store.defaultCredentials, name).toEqual({
          username: "admin",
          password: hostVars.SHOAL_KURRENTDB_PASSWORD,
        });
        // From a variable compose requires, never written in the file.
        expect(env(name).SHOAL_EVENTSTORE_URL, name).toMatch(
          /^kurrentdb:\/\/admin:\$\{SHOAL_KURRENTDB_PASSWORD:\?[^}]*\}@/,
        );
      }
      for (const name of kurrentdbs)
        for (const v of ["KURRENTDB_DEFAULT_ADMIN_PASSWORD", "KURRENTDB_DEFAULT_OPS_PASSWORD"])
          expect(env(name)[v], `${name}: ${v}`).toMatch(REQUIRED);
    });
  });

  it("references only what exists: build context, Dockerfile sources, services, volumes and config keys", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    // COPY from the build context (not --from another stage) names files that exist.
    for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm))
      for (const src of m[1]!.split(" ")) expect(existsSync(join(root, src)), src).toBe(true);
    for (const [name, service] of Object.entries(services)) {
      if (service.build) expect(existsSync(join(root, service.build, "Dockerfile")), name).toBe(true);
      for (const dep of dependencies(service)) expect(services, `${name} depends on ${dep}`).toHaveProperty(dep);
      for (const v of service.volumes ?? []) {
        const source = v.split(":")[0]!;
        if (source.startsWith("./")) expect(existsSync(join(root, source)), `${name}: ${v}`).toBe(true);
        else expect(compose.volumes, `${name}: ${v}`).toHaveProperty(source);
      }
      // Shoal ignores a SHOAL_ variable that names no key: a misspelt one would silently do nothing.
      if (!service.build) continue;
      for (const variable of Object.keys(service.environment ?? {})) {
        expect(variable, name).toMatch(/^SHOAL_/);
        expect(canonicalKey(variable.slice(6).replaceAll("_", ".")), `${name}: ${variable}`).toBeDefined();
      }
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
