/**
 * The consumer smoke test (`npm run test:smoke`, the last step of `npm test`): what a new
 * user does, from outside the workspace. It packs every publishable package (npm runs
 * each one's `prepack`, a clean build), serves the tarballs from a local registry
 * (registry.ts), and in temporary projects under the OS temp dir:
 *
 * - installs each package alone (with only its peer dependencies named) and checks that
 *   @tasklane/core came from that registry as a dependency, with no peer-dependency or
 *   engine warning, and that plain `node` imports it;
 * - installs what the README's Install section lists and runs a plain-node ESM app on the
 *   memory adapter and on the Redis adapter (against a redis-server of its own), first
 *   with ioredis 5 (the lowest version the peer range allows), then with ioredis 6;
 * - type-checks a TypeScript consumer and the README's code blocks with `tsc --noEmit`
 *   under the repository's strict settings, for moduleResolution NodeNext, Bundler and
 *   Node10.
 * - installs @tasklane/cli beside the Redis adapter and runs its `tasklane` command on
 *   plain node (the build its bin loads) against that redis-server.
 *
 * Set TASKLANE_SMOKE_KEEP=1 to keep the temporary projects (they are kept after a failure).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type RedisServer, startRedis } from "../../packages/adapter-redis/test/helpers.ts";
import { type LocalRegistry, startRegistry } from "./registry.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: parsed package.json, lockfile and npm output
type Json = Record<string, any>;
const readJson = (file: string): Json => JSON.parse(readFileSync(file, "utf8")) as Json;

/** The publishable packages, in dependency order. */
const PACKAGES = [
  "core",
  "adapter-memory",
  "conformance",
  "adapter-redis",
  "adapter-sqs",
  "opentelemetry",
  "http",
  "dashboard",
  "cli",
];

// Versions installed next to ours: the repository's own pins, so the smoke test checks what
// the tests check. ioredis: the lowest version the adapter's peer range allows (the tests
// run the devDependency) and the current major.
const rootPkg = readJson(join(ROOT, "package.json"));
const sqsPkg = readJson(join(ROOT, "packages/adapter-sqs/package.json"));
const ZOD = `zod@${rootPkg.devDependencies.zod}`;
const TYPES_NODE = `@types/node@${rootPkg.devDependencies["@types/node"]}`;
const VITEST = `vitest@${rootPkg.devDependencies.vitest}`;
const CLIENT_SQS = `@aws-sdk/client-sqs@${sqsPkg.devDependencies["@aws-sdk/client-sqs"]}`;
const otelPkg = readJson(join(ROOT, "packages/opentelemetry/package.json"));
const OTEL_API = `@opentelemetry/api@${otelPkg.devDependencies["@opentelemetry/api"]}`;
const IOREDIS_5 = "5.4.0";
const IOREDIS_6 = "6.0.0";

/** Each package installed alone, with the peer dependencies its README tells users to add. */
const ALONE: Record<string, string[]> = {
  "@tasklane/core": [],
  "@tasklane/adapter-memory": [],
  "@tasklane/conformance": [VITEST],
  "@tasklane/adapter-redis": [`ioredis@${IOREDIS_6}`],
  "@tasklane/adapter-sqs": [CLIENT_SQS],
  // its adapters are optional peer dependencies: the one a backend needs is installed beside it
  "@tasklane/cli": [],
  // Express and Fastify are optional peers of their mounts
  "@tasklane/http": [],
  "@tasklane/dashboard": [],
  // the Prometheus exporter is an optional peer of its subpath
  "@tasklane/opentelemetry": [OTEL_API],
};

/** Warnings that mean a broken install, though npm exits 0. */
const BAD_INSTALL = /ERESOLVE|EBADENGINE|peer dep|npm error/i;

interface Output {
  stdout: string;
  stderr: string;
}

// npm's variables from the `npm test` this runs under (npm_config_local_prefix and the
// like) would make an npm started in a temp project act on this repository instead.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^npm_|^INIT_CWD$/i.test(key)),
);

/** Run a command; reject with its output when it exits non-zero or outlives timeoutMs. */
function run(
  command: string,
  args: readonly string[],
  cwd: string,
  extraEnv: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<Output> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...env, ...extraEnv } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${command}: ${error.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        resolve({ stdout, stderr });
        return;
      }
      const how = signal ? `was killed (${signal}; limit ${timeoutMs} ms)` : `exited ${code}`;
      const tail = `${stdout}\n${stderr}`.trim().split("\n").slice(-60).join("\n");
      reject(new Error(`\`${[command, ...args].join(" ")}\` in ${cwd} ${how}:\n${tail}`));
    });
  });
}

// The npm running `npm test` (its CLI under this Node), else the one on PATH
const NPM_CLI = process.env.npm_execpath;
const npm = (args: readonly string[], cwd: string): Promise<Output> =>
  NPM_CLI?.endsWith(".js") ? run(process.execPath, [NPM_CLI, ...args], cwd) : run("npm", args, cwd);

/** `npm install`, failing on the warnings that npm lets pass. */
async function install(project: string, specs: readonly string[]): Promise<void> {
  const { stdout, stderr } = await npm(["install", ...specs], project);
  const bad = `${stdout}\n${stderr}`.split("\n").filter((line) => BAD_INSTALL.test(line));
  assert.deepEqual(bad, [], `npm install ${specs.join(" ")} in ${project} warned`);
}

/** The code blocks (```ts) of a README section, e.g. "Quickstart". */
function readmeBlocks(section: string): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const body = readme.split(new RegExp(`^## ${section}\\s*$`, "m"))[1]?.split(/^## /m)[0];
  assert.ok(body !== undefined, `README.md has no "## ${section}" section`);
  return [...body.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1] ?? "");
}

// What the repository builds with but an application does not use: its own export
// condition and emit settings. The rest (strict, exactOptionalPropertyTypes,
// noUncheckedIndexedAccess, verbatimModuleSyntax, ...) is what consumers are checked with.
const {
  customConditions: _conditions,
  composite: _composite,
  declaration: _declaration,
  sourceMap: _sourceMap,
  allowImportingTsExtensions: _tsImports,
  rewriteRelativeImportExtensions: _rewrite,
  module: _module,
  moduleResolution: _resolution,
  ...STRICT
} = readJson(join(ROOT, "tsconfig.base.json")).compilerOptions as Json;

const RESOLUTIONS = {
  NodeNext: { module: "NodeNext", moduleResolution: "NodeNext" },
  Bundler: { module: "ESNext", moduleResolution: "Bundler" },
  // esModuleInterop as `tsc --init` sets it (NodeNext and Bundler imply it): zod's own
  // declarations default-import CommonJS modules under Node10
  Node10: { module: "ESNext", moduleResolution: "Node10", esModuleInterop: true },
} as const;

const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

/** Type-check the consumer files of `project` under one moduleResolution. */
async function typecheck(project: string, resolution: keyof typeof RESOLUTIONS): Promise<void> {
  const config = `tsconfig.${resolution.toLowerCase()}.json`;
  writeFileSync(
    join(project, config),
    JSON.stringify({
      compilerOptions: {
        ...STRICT,
        ...RESOLUTIONS[resolution],
        // our declaration files are checked too, under the consumer's settings
        skipLibCheck: false,
        noEmit: true,
      },
      include: ["*.ts"],
    }),
  );
  await run(process.execPath, [TSC, "-p", config], project);
}

/** Every file path in an "exports" value (conditions and subpaths, nested). */
function targets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(targets);
  return [];
}

let temp: string;
let registry: LocalRegistry | undefined;
let redis: RedisServer | undefined;
let failed = false;
const packed: Json[] = [];

/** A new empty project in the temp dir whose @tasklane/* come from the local registry. */
function project(name: string): string {
  const dir = join(temp, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: `smoke-${name}`, private: true, type: "module" }, null, 2)}\n`,
  );
  writeFileSync(
    join(dir, ".npmrc"),
    [
      `@tasklane:registry=${registry?.url}`,
      "audit=false",
      "fund=false",
      "update-notifier=false",
    ].join("\n"),
  );
  return dir;
}

describe("consumer smoke test", { timeout: 300_000 }, () => {
  before(async () => {
    temp = mkdtempSync(join(tmpdir(), "tasklane-smoke-"));
    const tarballs = join(temp, "tarballs");
    mkdirSync(tarballs);
    const workspaces = PACKAGES.flatMap((name) => ["-w", `packages/${name}`]);
    try {
      // npm runs each package's prepack (scripts/prepack.ts): a clean build
      const { stdout } = await npm(
        ["pack", ...workspaces, "--pack-destination", tarballs, "--json"],
        ROOT,
      );
      packed.push(...(JSON.parse(stdout) as Json[]));
      registry = await startRegistry(packed.map((p) => join(tarballs, p.filename)));
      redis = await startRedis();
    } catch (error) {
      failed = true;
      throw error;
    }
  });

  after(async () => {
    await registry?.close();
    await redis?.stop();
    if (failed || process.env.TASKLANE_SMOKE_KEEP) console.log(`smoke projects kept in ${temp}`);
    else if (temp) rmSync(temp, { recursive: true, force: true });
  });

  const step = (name: string, body: () => Promise<void>) =>
    test(name, async () => {
      try {
        await body();
      } catch (error) {
        failed = true;
        throw error;
      }
    });

  step("each tarball ships dist, every file its package.json names, and no tests", async () => {
    assert.equal(packed.length, PACKAGES.length);
    for (const name of PACKAGES) {
      const pkg = readJson(join(ROOT, `packages/${name}/package.json`));
      const entry = packed.find((p) => p.name === pkg.name);
      assert.ok(entry, `${pkg.name} was not packed`);
      const files = new Set((entry.files as Json[]).map((f) => String(f.path)));
      for (const path of [...targets(pkg.types), ...targets(pkg.exports), ...targets(pkg.bin)]) {
        assert.ok(files.has(path.replace(/^\.\//, "")), `${pkg.name} lacks ${path}`);
      }
      assert.deepEqual(
        [...files].filter((path) => /\.test(-d)?\.ts$/.test(path)),
        [],
        `${pkg.name} ships test files`,
      );
    }
    // The CLI's bin runs its build
    const cliFiles = packed.find((p) => p.name === "@tasklane/cli")?.files as Json[];
    assert.ok(
      cliFiles.some((f) => f.path === "dist/main.js"),
      "@tasklane/cli lacks dist/main.js",
    );
    // The Redis adapter reads its Lua scripts at run time (from src/lua, beside dist/)
    const redisFiles = packed.find((p) => p.name === "@tasklane/adapter-redis")?.files as Json[];
    for (const lua of readdirSync(join(ROOT, "packages/adapter-redis/src/lua"))) {
      assert.ok(
        redisFiles.some((f) => f.path === `src/lua/${lua}`),
        `@tasklane/adapter-redis lacks src/lua/${lua}`,
      );
    }
  });

  step("each package installs alone and pulls @tasklane/core from the registry", async () => {
    for (const [name, peers] of Object.entries(ALONE)) {
      const dir = project(`alone-${name.split("/")[1]}`);
      const asked = registry?.requests.length ?? 0;
      await install(dir, [name, ...peers]);
      // Came through the registry (its packument asked for during this install) and is
      // our tarball byte for byte (the lockfile's integrity; npm may take the bytes from
      // its cache, and this machine's npm config leaves "resolved" out of lockfiles)
      const lock = readJson(join(dir, "package-lock.json"));
      for (const dep of new Set([name, "@tasklane/core"])) {
        assert.ok(
          registry?.requests.slice(asked).includes(new URL(registry.url).pathname + dep),
          `installing ${name} did not ask the local registry for ${dep}`,
        );
        assert.equal(
          lock.packages[`node_modules/${dep}`]?.integrity,
          packed.find((p) => p.name === dep)?.integrity,
          `${dep} (installing ${name}) is not the packed tarball`,
        );
      }
      // plain node, the package's "default" export: its dist/ and what dist/ loads
      await run(
        process.execPath,
        ["--input-type=module", "-e", `await import(${JSON.stringify(name)})`],
        dir,
      );
    }
  });

  step(`the memory and Redis apps run on plain node (ioredis ${IOREDIS_5})`, async () => {
    const dir = project("app");
    await install(dir, [
      "@tasklane/core",
      "@tasklane/adapter-memory",
      "@tasklane/adapter-redis",
      "@tasklane/adapter-sqs",
      "@tasklane/http",
      ZOD,
      `ioredis@${IOREDIS_5}`,
      CLIENT_SQS,
      TYPES_NODE,
    ]);
    for (const file of ["memory-app.mjs", "redis-app.mjs", "consumer.ts"]) {
      copyFileSync(join(HERE, file), join(dir, file));
    }
    const memory = await run(process.execPath, ["memory-app.mjs"], dir, {}, 30_000);
    assert.match(memory.stdout, /smoke ok: memory/);
    const onRedis = await run(
      process.execPath,
      ["redis-app.mjs"],
      dir,
      { REDIS_URL: redis?.url ?? "" },
      30_000,
    );
    assert.match(onRedis.stdout, new RegExp(`smoke ok: redis .* ioredis ${IOREDIS_5}`));
  });

  step(
    "a TypeScript consumer and the README's code compile (NodeNext, Bundler, Node10)",
    async () => {
      const dir = join(temp, "app");
      readmeBlocks("Quickstart").forEach((code, i) => {
        // The quickstart calls the application's own mailer: its shape, so the rest is checked
        const mailer =
          /\bmailer\./.test(code) && !/\b(const|let|var|function|class)\s+mailer\b/.test(code)
            ? "declare const mailer: { send(message: { to: string; subject: string }, " +
              "options: { signal: AbortSignal }): Promise<unknown> };\n"
            : "";
        writeFileSync(join(dir, `readme-quickstart-${i}.ts`), mailer + code);
      });
      readmeBlocks("Install").forEach((code, i) => {
        writeFileSync(join(dir, `readme-install-${i}.ts`), code);
      });
      for (const resolution of Object.keys(RESOLUTIONS) as Array<keyof typeof RESOLUTIONS>) {
        await typecheck(dir, resolution);
      }
    },
  );

  step(`ioredis ${IOREDIS_6} installs over 5 without a peer warning and runs the app`, async () => {
    const dir = join(temp, "app");
    await install(dir, [`ioredis@${IOREDIS_6}`]);
    const onRedis = await run(
      process.execPath,
      ["redis-app.mjs"],
      dir,
      { REDIS_URL: redis?.url ?? "" },
      30_000,
    );
    assert.match(onRedis.stdout, new RegExp(`smoke ok: redis .* ioredis ${IOREDIS_6}`));
    for (const resolution of Object.keys(RESOLUTIONS) as Array<keyof typeof RESOLUTIONS>) {
      await typecheck(dir, resolution);
    }
  });

  step("the tasklane CLI runs from its tarball on plain node, against Redis", async () => {
    const dir = join(temp, "app");
    await install(dir, ["@tasklane/cli"]);
    const cli = (args: string[]) =>
      run(process.execPath, [join(dir, "node_modules/.bin/tasklane"), ...args], dir, {
        TASKLANE_ADAPTER: "redis",
        REDIS_URL: redis?.url ?? "",
        REDIS_PREFIX: `smokecli${process.pid}`,
        TASKLANE_LANES: "default",
      });
    const version = readJson(join(ROOT, "packages/cli/package.json")).version as string;
    assert.equal((await cli(["--version"])).stdout.trim(), version);
    const created = await cli([
      "enqueue",
      "greet",
      '{"n":1}',
      "--lane",
      "default",
      "--job-id",
      "s1",
    ]);
    assert.equal(created.stdout, "created job s1 in lane default\n");
    const shown = JSON.parse((await cli(["jobs", "get", "s1", "--json"])).stdout) as Json;
    assert.deepEqual([shown.id, shown.state, shown.payload], ["s1", "waiting", '{"n":1}']);
    const status = JSON.parse((await cli(["status", "--json"])).stdout) as Json;
    assert.equal(status.counts.waiting, 1);
  });
});
