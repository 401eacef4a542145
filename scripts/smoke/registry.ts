/**
 * A minimal npm registry for the smoke test: it serves the packed tarballs of this
 * repository's packages (a packument per package, and its tarballs) on 127.0.0.1, the
 * protocol `npm install` speaks to registry.npmjs.org. A project that sets
 * `@tasklane:registry=<url>` in its .npmrc installs @tasklane/* from here and every other
 * package from its usual registry, so installing an adapter alone must pull
 * @tasklane/core through its dependency, as it would after a publish.
 *
 * Why not verdaccio: its current release does not install on this project's machines as it
 * stands (it needs an override of one of its dependencies), and it brings a web server,
 * storage and auth of its own; this is the part of a registry an install uses, nothing else.
 */
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { basename } from "node:path";
import { gunzipSync } from "node:zlib";

export interface LocalRegistry {
  /** Registry URL for .npmrc, ending in "/". */
  url: string;
  /** Every path requested so far (to show that an install came here). */
  requests: string[];
  close(): Promise<void>;
}

interface Manifest {
  name: string;
  version: string;
  [field: string]: unknown;
}

/** The package.json inside a tarball made by `npm pack` (entry "package/package.json"). */
export function manifestOf(tarball: Buffer): Manifest {
  const tar = gunzipSync(tarball);
  // ustar: 512-byte headers, the name in bytes 0-99, the size in octal in bytes 124-135,
  // then the content padded to 512 bytes
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = tar.toString("utf8", at, at + 100).replace(/\0.*$/s, "");
    if (name === "") break;
    const size = Number.parseInt(tar.toString("latin1", at + 124, at + 136).trim(), 8);
    if (name === "package/package.json") {
      return JSON.parse(tar.toString("utf8", at + 512, at + 512 + size)) as Manifest;
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error("no package/package.json in the tarball");
}

/** Serve `tarballs` (paths of `npm pack` output) until close(). */
export async function startRegistry(tarballs: readonly string[]): Promise<LocalRegistry> {
  const files = new Map<string, Buffer>();
  const packuments = new Map<string, Record<string, unknown>>();
  // A fresh path per run: npm caches packuments by URL, and each run's tarballs of the
  // same version differ (a new build), so no run may see another run's packument.
  const base = `/${randomUUID()}/`;
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    requests.push(path);
    const name = path.startsWith(base) ? path.slice(base.length) : "";
    const body = packuments.get(name) ?? files.get(name);
    if (body === undefined) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: `not found: ${path}` }));
      return;
    }
    // no-store: nothing of ours in npm's cache, where a later run's tarball of the same
    // version would not match this one's integrity
    const headers = { "cache-control": "no-store" };
    if (Buffer.isBuffer(body)) {
      response.writeHead(200, { ...headers, "content-type": "application/octet-stream" });
      response.end(body);
    } else {
      response.writeHead(200, { ...headers, "content-type": "application/json" });
      response.end(JSON.stringify(body));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}${base}`;

  for (const file of tarballs) {
    const bytes = readFileSync(file);
    const manifest = manifestOf(bytes);
    const { name, version } = manifest;
    const tarballPath = `${name}/-/${basename(file)}`;
    files.set(tarballPath, bytes);
    const packument = packuments.get(name) ?? {
      _id: name,
      name,
      "dist-tags": {},
      versions: {},
    };
    (packument["dist-tags"] as Record<string, string>).latest = version;
    (packument.versions as Record<string, unknown>)[version] = {
      ...manifest,
      _id: `${name}@${version}`,
      dist: {
        tarball: `${url}${tarballPath}`,
        integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
        shasum: createHash("sha1").update(bytes).digest("hex"),
      },
    };
    packuments.set(name, packument);
  }

  return {
    url,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
