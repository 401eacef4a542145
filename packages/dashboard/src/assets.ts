import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";

/** A file the dashboard serves, ready to send. */
export interface Asset {
  contents: Uint8Array;
  /** The same, gzipped, when that is smaller (text files). */
  gzipped: Uint8Array | undefined;
  type: string;
}

export interface Assets {
  /** The entry script and stylesheet the page loads. */
  script: string;
  style: string;
  files: ReadonlyMap<string, Asset>;
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  map: "application/json; charset=utf-8",
  txt: "text/plain; charset=utf-8",
};

function asset(name: string, contents: Uint8Array): Asset {
  const type = TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream";
  // Compressed once, here, not per request: the files never change while the process runs.
  const gzipped = gzipSync(contents, { level: 9 });
  return { contents, type, gzipped: gzipped.length < contents.length ? gzipped : undefined };
}

/**
 * The bundle. Built (`dist/index.js`): the files `prepack` wrote to `dist/assets/`. From
 * source (this repository's tests and demo, under the `source` condition): built in
 * memory by esbuild, a devDependency, so no build step is needed and nothing stale is
 * served; the builder is loaded by a computed specifier so the published code never
 * names it.
 */
export async function loadAssets(): Promise<Assets> {
  const fromSource = import.meta.url.endsWith(".ts");
  if (fromSource) {
    const builder = new URL("../scripts/build-assets.ts", import.meta.url).href;
    const { buildAssets } = (await import(builder)) as {
      buildAssets(options: { minify: boolean; sourcemap: boolean }): Promise<{
        manifest: { script: string; style: string };
        files: Array<{ name: string; contents: Uint8Array }>;
      }>;
    };
    const built = await buildAssets({ minify: true, sourcemap: true });
    return {
      ...built.manifest,
      files: new Map(built.files.map((f) => [f.name, asset(f.name, f.contents)])),
    };
  }
  const dir = new URL("./assets/", import.meta.url);
  let manifest: { script: string; style: string; files?: string[] };
  try {
    manifest = JSON.parse(await readFile(new URL("manifest.json", dir), "utf8"));
  } catch (error) {
    throw new Error(
      `@tasklane/dashboard: its bundle is missing (${dir.pathname}manifest.json): in the repository, run npm run build:assets -w @tasklane/dashboard (npm pack runs it)`,
      { cause: error },
    );
  }
  const names = manifest.files ?? [manifest.script, manifest.style];
  const files = new Map<string, Asset>();
  await Promise.all(
    names.map(async (name) => {
      files.set(name, asset(name, new Uint8Array(await readFile(new URL(name, dir)))));
    }),
  );
  return { script: manifest.script, style: manifest.style, files };
}
