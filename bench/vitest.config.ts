import { defineProject } from "vitest/config";

// Not in the root's project list (bench is not a package): run with
// `npx vitest run --config bench/vitest.config.ts`. Unit tests of the harness's own
// logic only; the benchmarks themselves are never run from tests.
export default defineProject({
  root: import.meta.dirname,
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: { name: "bench", include: ["src/**/*.test.ts"], exclude: ["src/simulate/**"] },
});
