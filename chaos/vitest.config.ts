import { defineProject } from "vitest/config";

// Part of `npm test` (`npx vitest run --project chaos` alone): the fault suite's own parts
// (the checker's rules, the TCP fault proxy, the ledger across kill -9). The scenarios
// themselves run from `npm run chaos`, which `npm test` runs as its last step.
export default defineProject({
  root: import.meta.dirname,
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: { name: "chaos", include: ["src/**/*.test.ts"] },
});
