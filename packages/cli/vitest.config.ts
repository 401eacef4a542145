import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "cli",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Each test runs the binary a few times (about half a second a run) and some wait for
    // a worker or an interval: more than vitest's default 5 s on a busy machine.
    testTimeout: 60_000,
  },
});
