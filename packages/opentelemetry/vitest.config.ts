import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: { name: "opentelemetry", include: ["src/**/*.test.ts", "test/**/*.test.ts"] },
});
