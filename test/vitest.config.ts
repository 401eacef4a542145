import { defineProject } from "vitest/config";

// Tests across packages: they import every package from source (as the examples do), so
// they live here rather than in one package that would then depend on all the others.
export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: { name: "cross-package", include: ["*.test.ts"] },
});
