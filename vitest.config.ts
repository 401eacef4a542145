import { defineConfig } from "vitest/config";

/**
 * Where the Valkey run finds its server: Debian's valkey-server package (bookworm-backports;
 * `.ci/run` installs it), or VALKEY_SERVER_BIN / VALKEY_CLI_BIN, or VALKEY_URL for a
 * server of your own (as REDIS_URL is for the redis-server run).
 */
const VALKEY_SERVER = process.env.VALKEY_SERVER_BIN ?? "/usr/bin/valkey-server";
const VALKEY_CLI = process.env.VALKEY_CLI_BIN ?? "/usr/bin/valkey-cli";

// One vitest project per package (and "cross-package" in test/, for tests that need them
// all, like the table of every option); packages resolve each other from source through the
// "source" export condition, so tests need no build step. The Redis adapter's tests run
// twice: against redis-server, and against valkey-server (the same suite, cluster, restart
// and ACL tests included), as the adapter promises both.
//
// maxWorkers: most tests wait on servers, child processes and short real leases rather than
// on the CPU, so four test files at a time fit on the two-core CI machine (vitest's default
// there is one at a time). Timing assertions are written to hold on a loaded machine.
export default defineConfig({
  test: {
    maxWorkers: 4,
    projects: [
      "packages/*",
      "examples",
      "test",
      "bench",
      "chaos",
      {
        extends: "./packages/adapter-redis/vitest.config.ts",
        root: "./packages/adapter-redis",
        test: {
          name: "adapter-redis-valkey",
          env: {
            TASKLANE_TEST_SERVER: "valkey",
            REDIS_SERVER_BIN: VALKEY_SERVER,
            REDIS_CLI_BIN: VALKEY_CLI,
            // REDIS_URL (a server of your own) is for the redis run; VALKEY_URL for this one
            REDIS_URL: process.env.VALKEY_URL ?? "",
          },
        },
      },
    ],
  },
});
