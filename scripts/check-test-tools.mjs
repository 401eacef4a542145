/**
 * The first step of `npm test`: the programs the tests start must be installed, or the run
 * stops here, at once, with one message saying what to install. Without it a machine
 * lacking redis-server ran for two minutes and then failed 18 files with raw
 * `spawn /usr/bin/redis-server ENOENT` errors.
 *
 * The paths are the ones the tests use: the REDIS_* and VALKEY_* variables (see
 * vitest.config.ts and packages/adapter-redis/test/helpers.ts) or Debian's.
 *
 * JavaScript, not TypeScript: before `npm install` has put the repository's Node 24 on
 * PATH, this runs on the system's Node (20 on these machines), which cannot run .ts files,
 * and it is the one step that can then say so.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const env = process.env;
if (!executable(fileURLToPath(new URL("../node_modules/.bin/node", import.meta.url)))) {
  console.error(
    "npm test: node_modules is missing or incomplete: run `npm install` first (it also " +
      "installs the Node 24 that the scripts and tests run on).",
  );
  process.exit(1);
}

/**
 * What the tests start. `path`: absolute, or a bare name looked up on PATH; `debian`: the
 * package that installs it; `usedBy`: who starts it.
 */
const TOOLS = [
  {
    path: env.REDIS_SERVER_BIN ?? "/usr/bin/redis-server",
    debian: "redis-server",
    usedBy: "the Redis adapter's tests and the smoke test",
  },
  {
    path: env.REDIS_CLI_BIN ?? "/usr/bin/redis-cli",
    debian: "redis-tools (comes with redis-server)",
    usedBy: "the Redis Cluster tests",
  },
  {
    path: "/usr/bin/redis-server",
    debian: "redis-server",
    usedBy: "the bench project's tests (bench/src/servers/redis.ts)",
  },
  {
    path: env.VALKEY_SERVER_BIN ?? "/usr/bin/valkey-server",
    debian: "valkey-server",
    usedBy: "the Redis adapter's tests on Valkey (project adapter-redis-valkey)",
  },
  {
    path: env.VALKEY_CLI_BIN ?? "/usr/bin/valkey-cli",
    debian: "valkey-tools (comes with valkey-server)",
    usedBy: "the Valkey Cluster tests",
  },
  { path: "openssl", debian: "openssl", usedBy: "the TLS tests (test certificates)" },
  {
    path: env.CHROMIUM_BIN ?? "/usr/bin/chromium",
    debian: "chromium",
    usedBy: "the dashboard's browser tests (packages/dashboard/test, through playwright-core)",
  },
];

/** @param {string} path */
function executable(path) {
  const candidates = path.includes("/")
    ? [path]
    : (env.PATH ?? "").split(delimiter).map((dir) => join(dir, path));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const missing = TOOLS.filter(
  (tool, i) => TOOLS.findIndex((t) => t.path === tool.path) === i && !executable(tool.path),
);
if (missing.length > 0) {
  const packages = [...new Set(missing.map((tool) => tool.debian.split(" ")[0]))];
  console.error(
    [
      "npm test: missing programs that the tests start:",
      ...missing.map((tool) => `  ${tool.path}: Debian package ${tool.debian}; for ${tool.usedBy}`),
      "",
      `Install them (as root): apt-get install -y ${packages.join(" ")}`,
      ...(packages.some((name) => name.startsWith("valkey"))
        ? [
            "  (Debian 12 has Valkey in bookworm-backports: add it, then apt-get install -t bookworm-backports)",
          ]
        : []),
      "or run `bash .ci/run`, which installs what is missing and then runs npm test.",
      "Binaries elsewhere: set REDIS_SERVER_BIN, REDIS_CLI_BIN, VALKEY_SERVER_BIN, VALKEY_CLI_BIN, CHROMIUM_BIN.",
    ].join("\n"),
  );
  process.exit(1);
}
