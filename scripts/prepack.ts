/**
 * `prepack` of every publishable package: npm runs it in the package's folder before
 * `npm pack` and `npm publish`. A clean build of the package, then a check that every file
 * its package.json points at exists, so a tarball never goes out without `dist/` (as one
 * did when `npm pack` ran before `npm run build`) or with a stale file of a source that
 * was deleted since the last build.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

interface Manifest {
  name: string;
  bin?: string | Record<string, string>;
  types?: string;
  exports?: unknown;
  typesVersions?: Record<string, Record<string, string[]>>;
}

const dir = process.cwd();
const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

// Both, not just dist/: `tsc -b` trusts tsconfig.tsbuildinfo and builds nothing when it
// says the project is up to date, even with dist/ gone. The referenced projects (core)
// keep their builds: `tsc -b` rebuilds them only when their sources changed.
rmSync(join(dir, "dist"), { recursive: true, force: true });
rmSync(join(dir, "tsconfig.tsbuildinfo"), { force: true });
try {
  // `tsc` from node_modules/.bin, which npm puts on PATH for lifecycle scripts
  execFileSync("tsc", ["-b"], { cwd: dir, stdio: "inherit" });
} catch (error) {
  fail(`tsc -b failed (${error instanceof Error ? error.message : String(error)})`);
}

/** Every file path in an "exports" value (conditions and subpaths, nested). */
function targets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(targets);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(targets);
  return [];
}

const mapped = pkg.typesVersions?.["*"] ?? {};
const files = [
  ...targets(pkg.exports),
  // a command's script (@tasklane/cli's bin/tasklane.js, which runs dist/main.js)
  ...targets(pkg.bin),
  ...(pkg.types === undefined ? [] : [pkg.types]),
  ...Object.values(mapped).flat(),
];
const missing = files.filter((target) => !target.includes("*") && !existsSync(join(dir, target)));
if (missing.length > 0) fail(`missing after the build: ${missing.join(", ")}`);

// TypeScript's moduleResolution Node10 ignores "exports": it finds the root through
// "types", and a subpath (`@tasklane/core/x`) only through a typesVersions entry. Each
// subpath needs one, or Node10 consumers get TS2307 for it.
const subpaths =
  typeof pkg.exports === "object" && pkg.exports !== null
    ? Object.keys(pkg.exports).filter((key) => key.startsWith("./") && key !== "./package.json")
    : [];
const unmapped = subpaths.filter((key) => mapped[key.slice(2)] === undefined);
if (unmapped.length > 0) {
  fail(
    `no typesVersions entry for ${unmapped.join(", ")}: add "typesVersions": { "*": { ` +
      `"<subpath>": ["<its exports 'types' file>"] } } so moduleResolution Node10 finds it`,
  );
}

function fail(message: string): never {
  console.error(`prepack ${pkg.name}: ${message}`);
  process.exit(1);
}
