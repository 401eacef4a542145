/**
 * The examples, run the way the README says (`npm run example:…`, `npm run demo`), as real
 * processes on real backends: the HTTP service keeps every job it accepted through a
 * SIGTERM sent to the process the command starts, adapter-from-env.ts checks each
 * backend, the demo's output agrees with itself, and operator.ts gets every answer it
 * expects.
 *
 *   npx vitest run --project examples   # starts its own redis-server and fauxqs
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane, defineTask } from "@tasklane/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type RedisServer, startRedis } from "../packages/adapter-redis/test/helpers.ts";
import { type SqsServer, startSqs } from "../packages/adapter-sqs/test/helpers.ts";

const ROOT = new URL("..", import.meta.url).pathname;

interface Example {
  /** The `npm` process: what a user's SIGTERM or a supervisor reaches. */
  proc: ChildProcess;
  /** Every line printed so far, stdout and stderr. */
  lines: string[];
  /** Resolves with the first line (past or future) matching `pattern`. */
  line(pattern: RegExp): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Example[] = [];

/** Start `npm run <script>` with extra environment, in a process group of its own. */
function runExample(script: string, env: Record<string, string>): Example {
  const proc = spawn("npm", ["run", "--silent", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own group, so a failed test can kill npm and node together
  });
  const lines: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    // "close", not "exit": every line has been read once the output pipes are closed
    (resolve) => proc.once("close", (code, signal) => resolve({ code, signal })),
  );
  for (const stream of [proc.stdout, proc.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line);
      for (const w of waiters.splice(0)) {
        if (w.pattern.test(line)) w.resolve(line);
        else waiters.push(w);
      }
    });
  }
  const line = (pattern: RegExp) => {
    const seen = lines.find((l) => pattern.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      waiters.push({ pattern, resolve });
      void exited.then(({ code, signal }) =>
        reject(
          new Error(
            `${script} exited (${code ?? signal}) before printing ${pattern}:\n${lines.join("\n")}`,
          ),
        ),
      );
    });
  };
  const example = { proc, lines, line, exited };
  started.push(example);
  return example;
}

afterEach(() => {
  // The whole group, even when npm has exited: a node it failed to stop would be left.
  for (const { proc } of started.splice(0)) {
    try {
      if (proc.pid !== undefined) process.kill(-proc.pid, "SIGKILL");
    } catch {
      // every process of the group has exited
    }
  }
});

/** How `example` ended, or a failure with its output if it is still running after `ms`. */
async function finished(example: Example, ms = 30_000) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const how = example.proc.exitCode ?? example.proc.signalCode;
      const npm = how === null ? "npm still runs" : `npm exited (${how}), its child still runs`;
      reject(new Error(`not finished after ${ms} ms (${npm}):\n${example.lines.join("\n")}`));
    }, ms);
  });
  try {
    return await Promise.race([example.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Start the HTTP service on a free port and wait until it listens. */
async function startService(env: Record<string, string>) {
  const service = runExample("example:http", { PORT: "0", ...env });
  const listening = await service.line(/^listening on http:\/\/localhost:\d+/);
  const port = Number(/:(\d+)/.exec(listening)?.[1]);
  return { ...service, port };
}

/** POST `n` thumbnails, `parallel` at a time; returns the ids of the accepted (202) jobs. */
async function postThumbnails(port: number, n: number, parallel = 10): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const client = async () => {
    while (next < n) {
      const i = next++;
      const res = await fetch(`http://127.0.0.1:${port}/thumbnails`, {
        method: "POST",
        body: JSON.stringify({ imageId: `img-${i}` }),
      });
      const body = (await res.json()) as { id?: string; error?: string };
      expect(res.status, body.error).toBe(202);
      ids.push(body.id as string);
    }
  };
  await Promise.all(Array.from({ length: parallel }, client));
  return ids;
}

/** Job ids the service printed as done, in order. */
function doneIds(lines: string[]): string[] {
  return lines.flatMap((l) => /^thumbnail \S+ done \(job (\S+),/.exec(l)?.[1] ?? []);
}

const JOBS = 300;

describe("examples/http-service.ts", () => {
  it("on memory, drains at SIGTERM: every accepted job runs, then exit 0", async () => {
    // 300 jobs of 400 ms at concurrency 20 take 6 s: most are pending at SIGTERM.
    const service = await startService({ TASKLANE_ADAPTER: "memory", WORK_MS: "400" });
    const accepted = await postThumbnails(service.port, JOBS);
    const doneBefore = doneIds(service.lines).length;
    expect(doneBefore).toBeLessThan(JOBS);

    service.proc.kill("SIGTERM");
    expect(await finished(service)).toEqual({ code: 0, signal: null });

    expect(service.lines).toContain("SIGTERM: shutting down");
    expect(service.lines.some((l) => /^drained in \d+ ms: every accepted job ran$/.test(l))).toBe(
      true,
    );
    const done = doneIds(service.lines);
    expect(done).toHaveLength(JOBS); // each job once
    expect(new Set(done)).toEqual(new Set(accepted));
  }, 60_000);

  describe("on Redis", () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it("hands back at SIGTERM: every accepted job ran or waits in the lane", async () => {
      // 300 jobs of 1 s at concurrency 20 take 15 s: most still wait at SIGTERM.
      const env = { TASKLANE_ADAPTER: "redis", REDIS_URL: redis.url, WORK_MS: "1000" };
      const service = await startService(env);
      const accepted = await postThumbnails(service.port, JOBS);

      service.proc.kill("SIGTERM");
      expect(await finished(service)).toEqual({ code: 0, signal: null });
      expect(service.lines).toContain("SIGTERM: shutting down");

      const ran = new Set(doneIds(service.lines));
      const tl = createTasklane({
        adapter: createRedisAdapter({ connection: redis.url }),
        lanes: [{ name: "default" }],
        tasks: [
          defineTask({
            name: "make-thumbnail",
            lane: "default",
            schema: z.object({ imageId: z.string() }),
            run() {},
          }),
        ],
      });
      try {
        const lane = tl.lane("default");
        const states = await Promise.all(accepted.map(async (id) => (await lane.get(id))?.state));
        const expected = accepted.map((id) => (ran.has(id) ? "succeeded" : "waiting"));
        expect(states).toEqual(expected);
        // Both paths taken: the jobs running at SIGTERM finished, the rest were handed back.
        expect(ran.size).toBeGreaterThan(0);
        expect(ran.size).toBeLessThan(JOBS);
        expect([...ran].every((id) => accepted.includes(id))).toBe(true);
        const waiting = JOBS - ran.size;
        expect(service.lines).toContain(
          `stopped: ${waiting} jobs wait in the lane for another instance`,
        );
        const counts = await lane.counts();
        expect(counts).toMatchObject({ waiting, delayed: 0, active: 0, failed: 0 });
        await lane.delete(accepted); // a server at REDIS_URL is left as it was found
      } finally {
        await tl.close();
      }
    }, 60_000);

    it("operator.ts answers every operator question on Redis too", async () => {
      const tour = runExample("example:operator", {
        TASKLANE_ADAPTER: "redis",
        REDIS_URL: redis.url,
        REDIS_PREFIX: `op${Date.now()}`,
      });
      expect(await finished(tour)).toEqual({ code: 0, signal: null });
      expect(tour.lines.at(-1)).toBe("every answer as expected");
      expect(tour.lines).toContain("customer:7 → resize succeeded; RangeError failures: 2");
      expect(tour.lines).toContain("retried 2 jobs of group RangeError");
    }, 60_000);

    it("adapter-from-env.ts checks Redis", async () => {
      const check = runExample("example:env", { TASKLANE_ADAPTER: "redis", REDIS_URL: redis.url });
      expect(await finished(check)).toEqual({ code: 0, signal: null });
      expect(check.lines[0]).toBe(`backend: redis (redis://127.0.0.1:${redis.port})`);
      expect(check.lines[3]).toBe("cannot:  (nothing)");
      expect(check.lines.at(-1)).toMatch(/^round trip: job \S+ published, run and acknowledged/);
    }, 60_000);
  });
});

describe("examples/adapter-from-env.ts", () => {
  it("prints the memory adapter's capabilities and makes a round trip", async () => {
    const check = runExample("example:env", { TASKLANE_ADAPTER: "", TASKLANE_BACKEND: "" });
    expect(await finished(check)).toEqual({ code: 0, signal: null });
    expect(check.lines).toEqual([
      "backend: memory (in this process: jobs live as long as it does)",
      expect.stringMatching(/^limits: {2}10000 jobs per call;/),
      expect.stringMatching(
        /^can: {5}exactCounts, ordered, priorities, .*, maxConcurrency, results, .*, expiry, schedules, retryAfter, groups, startNow, suspects, rateLimit, groupRateLimit, debounce, flows$/,
      ),
      "cannot:  (nothing)",
      expect.stringMatching(/^round trip: job \S+ published, run and acknowledged in \d+ ms$/),
    ]);
  }, 60_000);

  describe("on SQS", () => {
    let sqs: SqsServer;
    beforeAll(async () => {
      sqs = await startSqs();
    });
    afterAll(async () => {
      await sqs?.stop();
    });

    it("names what SQS cannot do and makes a round trip", async () => {
      const check = runExample("example:env", {
        TASKLANE_BACKEND: "sqs",
        SQS_ENDPOINT: sqs.endpoint,
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "test",
        AWS_SECRET_ACCESS_KEY: "test",
      });
      expect(await finished(check)).toEqual({ code: 0, signal: null });
      expect(check.lines[0]).toBe(`backend: sqs (${sqs.endpoint})`);
      expect(check.lines[3]).toMatch(
        /^cannot: {2}.*\bcancel\b.*\blifecycleEvents\b.*\bexpiry, schedules, retryAfter, groups, startNow, rateLimit, groupRateLimit, debounce, flows$/,
      );
      expect(check.lines.at(-1)).toMatch(/^round trip: job \S+ published, run and acknowledged/);
    }, 60_000);
  });

  it("refuses an unknown backend with a ConfigError", async () => {
    const check = runExample("example:env", { TASKLANE_BACKEND: "postgres" });
    expect((await finished(check)).code).toBe(1);
    expect(check.lines.join("\n")).toContain(
      'ConfigError: Invalid option TASKLANE_BACKEND = "postgres": must be memory, redis or sqs',
    );
  }, 60_000);
});

describe("examples/demo.ts", () => {
  it("piped: progress lines read the handlers running, the last one equals the table", async () => {
    const demo = runExample("demo", {});
    expect(await finished(demo)).toEqual({ code: 0, signal: null });
    const progress = demo.lines.flatMap((l) => {
      const m =
        /^published (\d+)\/3000 {2}succeeded (\d+) {2}retried (\d+) {2}dead (\d+) {2}running now (\d+), avg (\d+)$/.exec(
          l,
        );
      return m ? [m.slice(1).map(Number)] : [];
    });
    expect(progress.length).toBeGreaterThan(1);
    // Some second of the run had jobs running, and a handler count never exceeds concurrency.
    expect(progress.some(([, , , , , avg]) => (avg ?? 0) > 0)).toBe(true);
    expect(progress.every(([, , , , now, avg]) => (now ?? 0) <= 50 && (avg ?? 0) <= 50)).toBe(true);
    const [published, succeeded, retried, dead] = progress.at(-1) ?? [];
    expect(published).toBe(3000);
    expect((succeeded ?? 0) + (dead ?? 0)).toBe(3000);
    const total = demo.lines.find((l) => l.startsWith("all lanes"));
    expect(total?.split(/\s{2,}/).slice(1)).toEqual([
      String(succeeded),
      String(retried),
      String(dead),
      expect.stringMatching(/^\d+$/),
    ]);
    // The legend explains every column of the table's header.
    const header = demo.lines.find((l) => l.startsWith("lane (tickets)")) ?? "";
    const columns = header.split(/\s{2,}/);
    expect(columns).toHaveLength(9);
    for (const column of columns) {
      const name = column.replace(/ p(50|99)$/, " p50, p99");
      expect(demo.lines.some((l) => l.startsWith(`${name}  `))).toBe(true);
    }
  }, 60_000);
});

describe("examples/telemetry.ts", () => {
  it("traces a signup from its request to the job's run, and serves the metrics", async () => {
    const service = runExample("example:telemetry", { PORT: "0", TASKLANE_ADAPTER: "" });
    const listening = await service.line(/^listening on http:\/\/localhost:\d+/);
    const port = Number(/:(\d+)/.exec(listening)?.[1]);
    // its own two signups: ada's job succeeds, flaky's fails once and then succeeds
    await service.line(/process mail \(retried\)/);
    const spans = () =>
      service.lines.flatMap((l) => {
        const m = /^span trace=(\w+) id=(\w+) parent=(\S+) +(.+?)(?: \((\w+)\))? [\d.]+ ms$/.exec(
          l,
        );
        return m ? [{ trace: m[1], id: m[2], parent: m[3], name: m[4], outcome: m[5] }] : [];
      });
    for (let i = 0; i < 300 && spans().filter((s) => s.outcome === "succeeded").length < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // every trace of a signup: request → publish → process (→ smtp send), one trace id
    const requests = spans().filter((s) => s.name === "POST /signup");
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      const inTrace = spans().filter((s) => s.trace === request.trace);
      const publish = inTrace.find((s) => s.name === "publish mail");
      expect(publish?.parent).toBe(request.id);
      const runs = inTrace.filter((s) => s.name === "process mail");
      expect(runs.length).toBeGreaterThanOrEqual(1);
      for (const run of runs) {
        expect(run.parent).toBe(publish?.id);
        expect(inTrace.some((s) => s.name === "smtp send" && s.parent === run.id)).toBe(true);
      }
    }
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/^tasklane_jobs_succeeded_total\{[^}]*tasklane_lane="mail"[^}]*\} 2$/m);
    expect(text).toMatch(/^tasklane_jobs_retried_total\{[^}]*\} 1$/m);
    const viaApi = await fetch(`http://127.0.0.1:${port}/tasklane/metrics`);
    expect(viaApi.status).toBe(200);
    if (service.proc.pid !== undefined) process.kill(service.proc.pid, "SIGTERM");
    expect((await finished(service)).code).toBe(0);
  }, 60_000);
});

describe("examples/operator.ts", () => {
  it("answers every operator question as expected, then exits 0", async () => {
    const tour = runExample("example:operator", {});
    expect(await finished(tour)).toEqual({ code: 0, signal: null });
    expect(tour.lines.at(-1)).toBe("every answer as expected");
    expect(tour.lines.find((l) => l.startsWith("result:"))).toBe(
      "result: cat-320.png, 13440 bytes",
    );
    expect(tour.lines.find((l) => l.startsWith("expiry:"))).toBe(
      "expiry: expired; expired in lane slow: 1",
    );
  });
});

/**
 * An example that runs to its end on memory and on a real redis-server: `what` names the
 * test, `expectTour` checks its output lines.
 */
function tourOnMemoryAndRedis(script: string, what: string, expectTour: (lines: string[]) => void) {
  it(`${what} on memory, then exits 0`, async () => {
    const tour = runExample(script, { TASKLANE_ADAPTER: "", TASKLANE_BACKEND: "" });
    expect(await finished(tour)).toEqual({ code: 0, signal: null });
    expectTour(tour.lines);
  }, 60_000);

  describe("on Redis", () => {
    let server: RedisServer;
    beforeAll(async () => {
      server = await startRedis();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it(`${what}, then exits 0`, async () => {
      const tour = runExample(script, { TASKLANE_ADAPTER: "redis", REDIS_URL: server.url });
      expect(await finished(tour)).toEqual({ code: 0, signal: null });
      expectTour(tour.lines);
    }, 60_000);
  });
}

describe("examples/flow.ts", () => {
  const expectTour = (lines: string[]) => {
    expect(lines.slice(0, 2)).toEqual([
      "published: report blocked, 3 fetches on lane io",
      "blocked in lane reports: 2",
    ]);
    // the two pages in either order, both before the report
    expect(lines.slice(2, 4).sort()).toEqual([
      "fetched https://example.com/a",
      "fetched https://example.com/bb",
    ]);
    expect(lines.slice(4)).toEqual([
      'report "weekly": 2 of 3 pages (succeeded, succeeded, failed), 430 words',
      'notified ops: report succeeded with {"words":430}',
      "report succeeded, notify succeeded",
      "done: the pages first, then the report, then the notification",
    ]);
  };

  tourOnMemoryAndRedis(
    "example:flow",
    "runs the pages, then the report reading them, then the notification waiting for it",
    expectTour,
  );
});

describe("examples/schedules.ts", () => {
  const expectTour = (lines: string[]) => {
    const runs = lines.flatMap((l) => {
      const m = /^run every-second@(\d+): report for ops$/.exec(l);
      return m ? [Number(m[1])] : [];
    });
    // three runs, one per second, each slot once
    expect(runs).toHaveLength(3);
    expect(runs.map((r) => r - (runs[0] ?? 0))).toEqual([0, 1_000, 2_000]);
    expect(lines).toContain("nightly: paused, next run none");
    expect(lines).toContain("every-second: 3 runs, next none");
    expect(lines).toContain("nightly: 0 runs, next none, paused");
    expect(lines.at(-1)).toBe("done: three runs, one per slot");
  };

  tourOnMemoryAndRedis("example:schedules", "runs a schedule three times", expectTour);
});

describe("examples/rate-and-debounce.ts", () => {
  const expectTour = (lines: string[]) => {
    expect(lines).toContain("debounce: created, debounced, debounced, debounced, debounced");
    expect(lines).toContain("debounce: ran ada v5, bob v1");
    // The backend's start times: 4, then 4 a window later, then 2 (the limit is exact, so
    // the groups are too; the gaps are at least the window).
    expect(lines).toContain("mail: 10 jobs started 4 + 4 + 2, one window apart");
    const starts = lines.find((l) => l.startsWith("mail: starts at +ms "));
    const ms = (starts ?? "").slice("mail: starts at +ms ".length).split(", ").map(Number);
    expect(ms).toHaveLength(10);
    expect(ms[4]).toBeGreaterThanOrEqual(1_000);
    expect(ms[8]).toBeGreaterThanOrEqual((ms[4] ?? 0) + 1_000);
    expect(lines.at(-1)).toBe("done: 8 publishes, 2 runs; 4 starts a window");
  };

  tourOnMemoryAndRedis("example:rate", "debounces and rate-limits", expectTour);
});
