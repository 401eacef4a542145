import { defineConfig } from "vitest/config";

// One vitest project per package; packages resolve each other from source through the
// "source" export condition, so tests need no build step.
export default defineConfig({
  test: {
    projects: ["packages/*", "examples", "bench"],
  },
});
