// Compiles src/ and machines/ to dist/ (tsconfig.build.json); bin/shoal runs dist/src/cli/main.js. Bundles the web
// console (ui/, with Vite) into dist/ui, which the orchestrator serves at /ui.
//   node scripts/build.mjs              always rebuild (npm run build; scripts/setup)
//   node scripts/build.mjs --if-stale   rebuild only when the sources changed since the last build
//                                       (the test suite's global setup, npm run bench:cli)
// Staleness is a hash of the sources' contents, not their mtimes, so a checkout, a stash or an
// edit reverted to an older state is still noticed. The new tree is compiled beside dist/ and
// swapped in, so a `bin/shoal` started meanwhile never sees a half-written build. Every run stamps
// dist/build-info.json with the commit and its time (build-info.mjs), a fresh build's sources or not.
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import process from "node:process";
import { URL, fileURLToPath } from "node:url";
import { buildInfo } from "./build-info.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
const HASH_FILE = ".source-hash";
const INFO_FILE = "build-info.json";
const INPUTS = [
  "src",
  "machines",
  "ui",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "node_modules/typescript/package.json",
  "node_modules/vite/package.json",
];

/** The file itself, or every file under a directory. */
function files(path) {
  if (!existsSync(path) || !statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((e) => files(join(path, e.name)));
}

function sourceHash() {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    for (const file of files(join(root, input)).sort()) {
      hash.update(`${relative(root, file)}\0`);
      hash.update(existsSync(file) ? readFileSync(file) : "(missing)");
      hash.update("\0");
    }
  }
  return hash.digest("hex");
}

/** Writes the stamp into `dir` unless it already holds it; replaced whole, so a reader never sees half of it. */
function stamp(dir, info) {
  const path = join(dir, INFO_FILE);
  const text = `${JSON.stringify(info)}\n`;
  if (existsSync(path) && readFileSync(path, "utf8") === text) return;
  writeFileSync(`${path}.${process.pid}`, text);
  renameSync(`${path}.${process.pid}`, path);
}

let info;
try {
  info = buildInfo(root);
} catch (e) {
  process.stderr.write(`build: ${e.message}\n`);
  process.exit(1);
}
const hash = sourceHash();
const hashPath = join(dist, HASH_FILE);
if (process.argv.includes("--if-stale") && existsSync(hashPath) && readFileSync(hashPath, "utf8") === hash) {
  // The same sources at another commit: only the stamp changes.
  stamp(dist, info);
  process.exit(0);
}

const next = join(root, `dist.building-${process.pid}`);
rmSync(next, { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json"), "--outDir", next],
  {
    cwd: root,
    stdio: "inherit",
  },
);
if (tsc.status !== 0) {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write("build: tsc failed; dist/ is unchanged\n");
  process.exit(tsc.status ?? 1);
}
// Inside the same swap: a server started meanwhile never serves a console of another build than its code.
try {
  const { build } = await import("vite");
  await build({
    configFile: join(root, "ui", "vite.config.ts"),
    logLevel: "warn",
    build: { outDir: join(next, "ui"), emptyOutDir: true },
  });
} catch (e) {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write(
    `build: the console (ui/) did not build: ${e instanceof Error ? e.message : e}; dist/ is unchanged\n`,
  );
  process.exit(1);
}
writeFileSync(join(next, HASH_FILE), hash);
stamp(next, info);
const old = join(root, `dist.old-${process.pid}`);
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
process.stdout.write(
  `build: compiled src/ and machines/, and bundled ui/, to ${relative(process.cwd(), dist) || "."}/\n`,
);
