import { defineProject } from "vitest/config";

// Part of `npm test` (`npx vitest run --project bench` alone). Unit tests of the harness's
// own logic and its counters (against a real redis-server and fauxqs); the benchmarks
// themselves never run from tests.
export default defineProject({
  root: import.meta.dirname,
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: { name: "bench", include: ["src/**/*.test.ts"] },
});
