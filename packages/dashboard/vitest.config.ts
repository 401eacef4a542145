import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  // Browser tests: a chromium per file, one file at a time (two shared cores); they wait
  // for conditions, and these limits only bound a hang.
  test: {
    name: "dashboard",
    include: ["test/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
