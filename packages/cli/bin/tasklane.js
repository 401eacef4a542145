#!/usr/bin/env node
// The `tasklane` command. An installed package runs its build (dist/) on plain node. In a
// checkout of the repository that has not been built, `npx tasklane` runs the TypeScript
// sources instead (Node 24 strips their types), with @tasklane/* packages resolved through
// their "source" export condition, as `npm run tasklane --` does.
import { existsSync } from "node:fs";
import module from "node:module";

const built = new URL("../dist/main.js", import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (!specifier.startsWith("@tasklane/")) return nextResolve(specifier, context);
      return nextResolve(specifier, { ...context, conditions: [...context.conditions, "source"] });
    },
  });
  await import(new URL("../src/main.ts", import.meta.url).href);
}
