import { execSync, spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConnectionString } from "@kurrent/kurrentdb-client/dist/Client/parseConnectionString.js";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { metricsListenOf } from "../../src/compute/metrics-listen-of.ts";
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
  "SHOAL_PROMETHEUS_API_KEY",
  "SHOAL_COMPUTE_METRICS_TOKEN",
  "SHOAL_GRAFANA_PASSWORD",
]);
/** Variables naming files the loader reads and checks: where tls-init put them here stands for the container's path. */
const LOADED_FILES = ["SHOAL_API_TLS_CERTFILE", "SHOAL_API_TLS_KEYFILE"];
/** The config a Shoal service runs with, loaded by Shoal's own loader from its environment. */
const configOf = (name: string) => {
  const given = serviceEnv(name, hostVars);
  for (const v of LOADED_FILES) if (given[v] !== undefined) given[v] = tlsInit().hostPath(name, given[v]);
  return loadConfig({ env: given });
};
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
    // And tls-init, which makes the certificates, and Prometheus and Grafana.
    expect(Object.keys(services)).toHaveLength(14);
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
      // The admin, and Prometheus reading /metrics and nothing else.
      expect(
        config["API.Auth.Users"].map((u) => u.Capabilities),
        name,
      ).toEqual([[{ Actions: ["*"] }], [{ Actions: ["read:agent"] }]]);
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
    // The API keys are the variables' values, not keys in the file.
    const users = parseAuthUsers(interpolate(orchestratorVars("SHOAL_API_AUTH_USERS")[0]!, hostVars), "env", "users");
    expect(users.map((u) => u.APIKey)).toEqual([hostVars.SHOAL_API_KEY, hostVars.SHOAL_PROMETHEUS_API_KEY]);
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
      for (const name of [...natsServers, ...orchestrators, ...computes, "prometheus"])
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

  describe("TLS: tls-init's certificates for the orchestrators' APIs", () => {
    it("serves each orchestrator's API on its own certificate, for its service name and localhost, from the CA", () => {
      for (const name of orchestrators) {
        const config = configOf(name);
        const pair = readPair(config["API.TLS.CertFile"], config["API.TLS.KeyFile"])!;
        expect(pair.certificate.checkHost(name), name).toBe(name);
        expect(pair.certificate.checkHost("localhost"), name).toBe("localhost");
        // The CA the CLI is told to take from /tls/ca.crt.
        const ca = new X509Certificate(readFileSync(tlsInit().hostPath(name, "/tls/ca.crt")));
        expect(pair.certificate.checkIssued(ca) && pair.certificate.verify(ca.publicKey), name).toBe(true);
      }
    });
  });

  describe("Prometheus and Grafana", () => {
    /** A file a service mounts from this repository, at `path` inside its container. */
    const mountedFile = (service: string, path: string) => {
      for (const v of services[service]!.volumes ?? []) {
        const [source, target] = v.split(":") as [string, string];
        if (!source.startsWith("./")) continue;
        if (path === target) return join(root, source);
        if (path.startsWith(`${target}/`)) return join(root, source, path.slice(target.length));
      }
      throw new Error(`${service} mounts no file of the repository at ${path}`);
    };
    /** The ports a service listens on for the compose network: those it publishes and those it exposes. */
    const containerPorts = (service: string) => [
      ...(services[service]!.ports ?? []).map((p) => p.split(":").at(-1)!),
      ...(services[service]!.expose ?? []),
    ];
    /** The compose secret a service reads at `path`: it must list it, and compose puts it at /run/secrets/<name>. */
    const secretAt = (service: string, path: string) => {
      const name = /^\/run\/secrets\/([\w.-]+)$/.exec(path)?.[1];
      expect(name, `${service}: ${path}`).toBeDefined();
      expect(services[service]!.secrets ?? [], service).toContain(name);
      expect(compose.secrets, service).toHaveProperty(name!);
      return name!;
    };
    const flag = (service: string, name: string) =>
      services[service]!.command?.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

    interface ScrapeJob {
      job_name: string;
      scheme?: string;
      metrics_path?: string;
      tls_config?: { ca_file?: string; insecure_skip_verify?: boolean };
      authorization?: { type?: string; credentials_file?: string; credentials?: string };
      static_configs: { targets: string[] }[];
    }
    const prometheusConfig = () =>
      parseYaml(readFileSync(mountedFile("prometheus", flag("prometheus", "config.file")!), "utf8")) as {
        scrape_configs: ScrapeJob[];
      };
    const jobScraping = (service: string) =>
      prometheusConfig().scrape_configs.find((j) =>
        j.static_configs.some((c) => c.targets.some((t) => t.startsWith(`${service}:`))),
      )!;

    it("scrapes every orchestrator and compute node, each once, at the port its service listens on", () => {
      const targets = prometheusConfig().scrape_configs.flatMap((j) => j.static_configs.flatMap((c) => c.targets));
      const hosts = targets.map((t) => t.split(":")[0]!);
      expect(hosts.sort()).toEqual([...orchestrators, ...computes].sort());
      for (const target of targets) {
        const [host, port] = target.split(":") as [string, string];
        expect(services, target).toHaveProperty(host);
        expect(containerPorts(host), target).toContain(port);
        // Where Shoal itself listens, from the service's own environment.
        const config = configOf(host);
        const listens = orchestrators.includes(host) ? config["API.Port"] : config["Compute.Metrics.Port"];
        expect(String(listens), target).toBe(port);
      }
      for (const job of prometheusConfig().scrape_configs) expect(job.metrics_path ?? "/metrics").toBe("/metrics");
    });

    it("scrapes the orchestrators over HTTPS trusting tls-init's CA, with an API key that reads /metrics only", () => {
      const job = jobScraping(orchestrators[0]!);
      expect(job.scheme).toBe("https");
      expect(job.tls_config?.insecure_skip_verify ?? false).toBe(false);
      const ca = new X509Certificate(readFileSync(tlsInit().hostPath("prometheus", job.tls_config!.ca_file!)));
      for (const name of orchestrators) {
        const config = configOf(name);
        const served = new X509Certificate(readFileSync(config["API.TLS.CertFile"]));
        expect(served.checkIssued(ca), name).toBe(true);
        expect(served.checkHost(name), name).toBe(name);
      }
      // Prometheus runs as nobody: the CA it trusts is readable by all.
      expect(statSync(tlsInit().hostPath("prometheus", job.tls_config!.ca_file!)).mode & 0o004).toBe(0o004);
      expect(job.authorization?.type ?? "Bearer").toBe("Bearer");
      const variable = compose.secrets[secretAt("prometheus", job.authorization!.credentials_file!)]!.environment!;
      const users = configOf(orchestrators[0]!)["API.Auth.Users"];
      const scraper = users.find((u) => u.APIKey === hostVars[variable]);
      expect(scraper?.Capabilities).toEqual([{ Actions: ["read:agent"] }]);
    });

    it("scrapes the compute nodes with the bearer token they ask for, from the one secret", () => {
      const job = jobScraping(computes[0]!);
      expect(job.scheme ?? "http").toBe("http");
      for (const name of computes) {
        expect(jobScraping(name).job_name, name).toBe(job.job_name);
        const config = configOf(name);
        expect(config["Compute.Metrics.BearerToken"], name).toBe("");
        const tokenFile = config["Compute.Metrics.BearerTokenFile"];
        if (tokenFile === "") {
          expect(job.authorization, name).toBeUndefined();
          continue;
        }
        expect(secretAt("prometheus", job.authorization!.credentials_file!), name).toBe(secretAt(name, tokenFile));
        // A token made as the header says serves the node's metrics on the scraped port, asking for it.
        const file = join(tempDir(), "token");
        writeFileSync(file, execSync("head -c 32 /dev/urandom | base64"));
        const listen = metricsListenOf({ ...config, "Compute.Metrics.BearerTokenFile": file }).metrics!;
        expect(listen.bearerToken, name).toBe(readFileSync(file, "utf8").trim());
        expect(
          job.static_configs.flatMap((c) => c.targets),
          name,
        ).toContain(`${name}:${listen.port}`);
      }
    });

    it("takes each secret from a variable the header has the user set", () => {
      const text = readFileSync(join(root, "docker-compose.yml"), "utf8");
      const header = text.slice(0, text.search(/^[^#]/m));
      const loop = /for v in ([^;]*); do/.exec(header.replaceAll(/\\\n#\s*/g, " "))![1]!.split(/\s+/);
      for (const [name, source] of Object.entries(compose.secrets)) {
        expect(source.environment, name).toMatch(/^SHOAL_/);
        expect(loop, name).toContain(source.environment!.slice("SHOAL_".length));
      }
      expect(env("grafana").GF_SECURITY_ADMIN_PASSWORD).toMatch(REQUIRED);
    });

    it("gives Grafana that Prometheus as the default data source of the dashboard's type, and the dashboard", () => {
      const provisioning = (dir: string) =>
        readdirSync(mountedFile("grafana", `/etc/grafana/provisioning/${dir}`)).map(
          (f) =>
            parseYaml(readFileSync(mountedFile("grafana", `/etc/grafana/provisioning/${dir}/${f}`), "utf8")) as any,
        );
      const sources = provisioning("datasources").flatMap((f) => f.datasources);
      expect(sources).toHaveLength(1);
      const source = sources[0];
      const url = new URL(source.url);
      expect(services, source.url).toHaveProperty(url.hostname);
      expect(containerPorts(url.hostname)).toContain(url.port);
      expect(flag(url.hostname, "web.listen-address") ?? ":9090").toBe(`:${url.port}`);
      expect(source.isDefault).toBe(true);

      const dashboard = JSON.parse(readFileSync(join(root, "deploy/grafana/shoal-dashboard.json"), "utf8"));
      // Its data source is a variable of the provisioned source's type, which Grafana sets to the default one.
      const variable = dashboard.templating.list.find((v: any) => v.type === "datasource");
      expect(variable.query).toBe(source.type);
      for (const panel of dashboard.panels.filter((p: any) => p.type !== "row"))
        for (const used of [panel.datasource, ...panel.targets.map((t: any) => t.datasource)])
          expect(used, panel.title).toEqual({ type: source.type, uid: `\${${variable.name}}` });

      // The file compose mounts where the provider reads dashboards, which is also Grafana's home dashboard.
      const [provider] = provisioning("dashboards").flatMap((f) => f.providers);
      const home = env("grafana").GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH!;
      expect(home.startsWith(`${provider.options.path}/`)).toBe(true);
      expect(mountedFile("grafana", home)).toBe(join(root, "deploy/grafana/shoal-dashboard.json"));
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
