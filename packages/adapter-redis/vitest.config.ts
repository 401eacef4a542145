import { defineProject } from "vitest/config";

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "adapter-redis",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    env: { TASKLANE_TEST_SERVER: "redis" },
  },
});
