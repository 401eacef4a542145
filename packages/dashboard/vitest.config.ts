import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  // Browser tests: one chromium each, on two shared cores; they wait for conditions, and
  // these limits only bound a hang.
  test: {
    name: "dashboard",
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
