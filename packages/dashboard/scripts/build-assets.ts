/**
 * The dashboard's browser bundle: `client/main.tsx` (Preact, uPlot, our code and CSS)
 * bundled and minified by esbuild into content-hashed files and a manifest.
 *
 * - `node scripts/build-assets.ts` (the package's `prepack`, after tsc) writes them to
 *   `dist/assets/` and prints their sizes, raw and gzipped.
 * - In the repository the server runs from source and calls `buildAssets()` itself, in
 *   memory, on the first request (src/assets.ts): tests and the demo need no build step,
 *   and never serve a stale bundle.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

/** One built file: its name (relative to the assets folder) and contents. */
export interface BuiltAsset {
  name: string;
  contents: Uint8Array;
}

/** What the page loads: the names of the entry script and stylesheet. */
export interface AssetManifest {
  script: string;
  style: string;
}

export interface BuiltAssets {
  manifest: AssetManifest;
  files: BuiltAsset[];
}

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Bundle the client. `sourcemap`: add linked .map files (the published build has them). */
export async function buildAssets(
  options: { minify?: boolean; sourcemap?: boolean } = {},
): Promise<BuiltAssets> {
  const result = await build({
    entryPoints: [join(ROOT, "client/main.tsx")],
    bundle: true,
    format: "esm",
    // Browsers of the last few years: <dialog>, fetch streams, CSS nesting not assumed.
    target: ["chrome111", "firefox115", "safari16.4"],
    platform: "browser",
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: options.minify ?? true,
    sourcemap: options.sourcemap ? "linked" : false,
    entryNames: "[name]-[hash]",
    outdir: "/assets",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const files = result.outputFiles.map((file) => ({
    name: basename(file.path),
    contents: file.contents,
  }));
  const find = (ext: string) => {
    const file = files.find((f) => f.name.startsWith("main-") && f.name.endsWith(ext));
    if (file === undefined) throw new Error(`the build made no main-*${ext}`);
    return file.name;
  };
  return { manifest: { script: find(".js"), style: find(".css") }, files };
}

/** Bytes gzipped at the level a server would use (for the README's size). */
export function gzipSize(contents: Uint8Array): number {
  return gzipSync(contents, { level: 9 }).length;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(basename(process.argv[1]))) {
  const out = join(ROOT, "dist/assets");
  const { manifest, files } = await buildAssets({ minify: true, sourcemap: true });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const file of files) writeFileSync(join(out, file.name), file.contents);
  const names = files.map((f) => f.name);
  writeFileSync(
    join(out, "manifest.json"),
    `${JSON.stringify({ ...manifest, files: names }, null, 2)}\n`,
  );
  // stderr: `npm pack --json` runs this as prepack, and its stdout must stay JSON
  for (const file of files.filter((f) => !f.name.endsWith(".map"))) {
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
    console.error(
      `dist/assets/${file.name}: ${kb(file.contents.length)}, gzip ${kb(gzipSize(file.contents))}`,
    );
  }
}
