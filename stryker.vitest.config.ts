import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * The tests the mutation run (stryker.config.json) uses: core's, and the memory adapter's
 * on the manual clock (its conformance and model suites included). The system-clock
 * conformance run is left out: it tests the same code in real time, slowly, per mutant.
 *
 * Stryker runs in a copy of the repository (a sandbox) whose node_modules links back to
 * the original packages, so the workspace packages are aliased to the sandbox's own
 * sources here: the mutated ones.
 */
const root = dirname(fileURLToPath(import.meta.url));
const src = (path: string) => join(root, "packages", path);
const alias = [
  { find: /^@tasklane\/core\/adapter$/, replacement: src("core/src/adapter-kit.ts") },
  { find: /^@tasklane\/core\/kale$/, replacement: src("core/src/kale.ts") },
  { find: /^@tasklane\/core$/, replacement: src("core/src/index.ts") },
  { find: /^@tasklane\/adapter-memory$/, replacement: src("adapter-memory/src/index.ts") },
  { find: /^@tasklane\/conformance$/, replacement: src("conformance/src/index.ts") },
];

export default defineConfig({
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: "core",
          root: src("core"),
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
        },
      },
      {
        resolve: { alias },
        test: {
          name: "adapter-memory",
          root: src("adapter-memory"),
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["test/conformance-system-clock.test.ts"],
        },
      },
    ],
  },
});
