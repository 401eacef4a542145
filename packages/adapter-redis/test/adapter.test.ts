import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Socket } from "node:net";
import {
  type AdapterEvent,
  addSample,
  bucketIndex,
  ClosedError,
  ConfigError,
  emptySummary,
  HISTOGRAM_BOUNDS_MS,
  type Lock,
  type NewJob,
} from "@tasklane/core/adapter";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedisAdapter,
  deleteStaleLibraries,
  LIBRARY,
  type RedisAdapter,
  RedisOutOfMemoryError,
  RedisUnavailableError,
  VERSION,
} from "../src/index.ts";
import { decodeId, encodeId, laneKeys, SCRIPTS } from "../src/internal.ts";
import { parseSummary } from "../src/redis-lane.ts";
import {
  blockedPollList,
  blockedSince,
  commandCalls,
  freePort,
  newJob as job,
  LANE_OPTIONS,
  libraryNames,
  loadStubLibrary,
  type RedisServer,
  startRedis,
  uniquePrefix,
  waitFor,
} from "./helpers.ts";

let server: RedisServer;
let raw: Redis;
let adapter: RedisAdapter;
let prefix: string;

beforeAll(async () => {
  server = await startRedis();
  raw = new Redis(server.port, server.host);
  prefix = uniquePrefix();
  adapter = createRedisAdapter({ connection: server.url, prefix });
});

afterAll(async () => {
  await adapter?.close();
  raw?.disconnect();
  await server?.stop();
});

const opts = LANE_OPTIONS;
const fresh = (extra: Partial<typeof opts & { maxConcurrency: number }> = {}) =>
  adapter.lane(`q-${randomUUID().slice(0, 8)}`, { ...opts, ...extra });

/**
 * A put and a reserve, so both scripts are cached on the server: a put that met NOSCRIPT
 * would go out again (as EVAL) only after commands sent behind it.
 */
const loadPutAndReserve = async (q: Awaited<ReturnType<typeof fresh>>) => {
  await q.put([job()]);
  expect((await q.reserve({ limit: 10, leaseMs: 30_000, waitMs: 0 })).jobs).toHaveLength(1);
};

/** Puts go out together at the end of the tick they were made in (see RedisLane.put). */
const putSent = () => new Promise((resolve) => process.nextTick(resolve));

/**
 * Resolves once the server shows a poll blocked since `untilBlocked` was called (see
 * blockedSince): a poll still being unblocked (an earlier test's, or an aborted one whose
 * CLIENT UNBLOCK is on its way) may leave while this one arrives. Counting from the lowest
 * reading since missed that when both fell between two readings (a loaded machine): the
 * count stayed as it was, and the new poll, re-blocking every maxBlockMs, was never seen.
 */
const untilBlocked = async (): Promise<() => Promise<void>> => {
  const before = await blockedPollList(raw);
  const at = Date.now();
  return async () => {
    await waitFor(
      async () => blockedSince(before, await blockedPollList(raw), Date.now() - at),
      "the poll to block",
    );
  };
};

/** Start `reserve` and resolve once the server shows it blocked (its pending reserve). */
const blockedPoll = async <T>(reserve: () => Promise<T>): Promise<{ poll: Promise<T> }> => {
  const blocked = await untilBlocked();
  const poll = reserve();
  await blocked();
  return { poll };
};

describe("id codec", () => {
  it("round-trips UUIDs compactly and every other id unchanged", () => {
    const uuid = randomUUID();
    expect(encodeId(uuid)).toHaveLength(23);
    for (const id of [uuid, "plain", "~tilde", "~~two", "", "ü€😀", uuid.toUpperCase(), "~"]) {
      expect(decodeId(encodeId(id))).toBe(id);
    }
  });

  it("stores a UUID as base64url of its 16 bytes, and anything UUID-like but not one as is", () => {
    for (let i = 0; i < 500; i++) {
      const uuid = randomUUID();
      const bytes = Buffer.from(uuid.replaceAll("-", ""), "hex");
      expect(encodeId(uuid)).toBe(`~${bytes.toString("base64url")}`);
    }
    const uuid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
    const near = [
      uuid.replace("-", "_"), // a dash missing
      `${uuid.slice(0, 35)}g`, // not hex
      uuid.toUpperCase(), // not canonical lowercase
      `${uuid.slice(0, 8)}${uuid.slice(9)}-`, // a dash moved
    ];
    for (const id of near) expect(encodeId(id)).toBe(id);
  });

  it("hands back a stored id that encodeId did not write untouched", () => {
    for (let i = 0; i < 500; i++) {
      const uuid = randomUUID();
      expect(decodeId(encodeId(uuid))).toBe(uuid);
    }
    const valid = encodeId("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
    const foreign = [
      `${valid.slice(0, 22)}B`, // low bits of the last character set: no 16-byte value
      `${valid.slice(0, 5)}!${valid.slice(6)}`, // not base64url
      valid.slice(0, 22), // too short
      `${valid}A`, // too long
    ];
    for (const stored of foreign) expect(decodeId(stored)).toBe(stored);
  });
});

describe("scripts", () => {
  it("carry the package version in their name and source", () => {
    expect(SCRIPTS.reserve.name).toBe(`tasklane@${VERSION}:reserve`);
    expect(SCRIPTS.reserve.source.startsWith(`-- tasklane@${VERSION}:reserve`)).toBe(true);
  });

  it("delete the function libraries of other tasklane builds, and keep working without them", async () => {
    const stale = "tasklane_0_0_1_0123456789ab";
    await raw.call("FUNCTION", "FLUSH");
    const own = createRedisAdapter({ connection: server.url, prefix });
    try {
      const q = await own.lane("stale-libraries", opts); // loads this build's library
      await loadStubLibrary(raw, stale);
      await loadStubLibrary(raw, "someone_elses");
      const names = () => libraryNames(raw);
      expect(await names()).toEqual([LIBRARY.name, "someone_elses", stale].sort());
      expect(await deleteStaleLibraries(raw)).toEqual([stale]);
      expect(await names()).toEqual([LIBRARY.name, "someone_elses"].sort());
      expect(await deleteStaleLibraries(raw)).toEqual([]);
      // Another build's deleteStaleLibraries deletes this build's library: the next call
      // loads it again, and nothing is lost.
      await raw.call("FUNCTION", "DELETE", LIBRARY.name);
      const put = job();
      expect(await q.put([put])).toEqual([{ id: put.id, status: "created" }]);
      const got = (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(got.map((j) => j.id)).toEqual([put.id]);
      expect(await q.ack([got[0]!.lock])).toEqual(["ok"]);
      expect(await names()).toEqual([LIBRARY.name, "someone_elses"].sort());
    } finally {
      await raw.call("FUNCTION", "DELETE", "someone_elses").catch(() => {});
      await own.close();
    }
  });

  it("keep a long poll going when the reserve behind its block finds the library gone", async () => {
    const name = `q-${randomUUID().slice(0, 8)}`;
    const q = await adapter.lane(name, opts);
    await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 }); // empty: the next one blocks
    const before = await commandCalls(raw);
    const { poll } = await blockedPoll(() =>
      q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 5_000 }),
    );
    // The block ends (a wake-up marker) while the library is gone: the reserve queued
    // behind it fails, and the poll goes on with a reserve that loads the library again.
    await raw.call("FUNCTION", "DELETE", LIBRARY.name);
    await raw.lpush(laneKeys(prefix, name).wake, "1");
    await waitFor(
      async () => ((await raw.call("FUNCTION", "LIST", "LIBRARYNAME", LIBRARY.name)) as []).length,
      "the library loaded again by the poll",
    );
    expect((await commandCalls(raw)).fcall - before.fcall).toBeGreaterThanOrEqual(2);
    const put = job();
    await q.put([put]);
    expect((await poll).jobs.map((j) => j.id)).toEqual([put.id]);
  });

  it("run as one function library by default, loaded when the adapter starts", async () => {
    await raw.call("FUNCTION", "FLUSH");
    const own = createRedisAdapter({ connection: server.url, prefix });
    try {
      const q = await own.lane("library", opts); // resolves once the adapter has started
      const libraries = (await raw.call("FUNCTION", "LIST", "LIBRARYNAME", LIBRARY.name)) as [
        string,
        string,
      ][];
      expect(libraries).toHaveLength(1);
      expect(LIBRARY.name).toMatch(
        new RegExp(`^tasklane_${VERSION.replace(/\W/g, "_")}_[0-9a-f]{12}$`),
      );
      expect(SCRIPTS.reserve.fn).toBe(`${LIBRARY.name}_reserve`);
      const calls = await commandCalls(raw);
      await q.put([job()]);
      const r = await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 });
      expect(await q.ack([r.jobs[0]!.lock])).toEqual(["ok"]);
      const after = await commandCalls(raw);
      expect(after.fcall - calls.fcall).toBe(3);
      expect(after.evalsha - calls.evalsha).toBe(0);
    } finally {
      await own.close();
    }
  });

  it.each([
    ["functions", "FUNCTION"],
    ["eval", "SCRIPT"],
  ] as const)(
    "keep working when the server forgets them (%s, %s FLUSH)",
    async (scripting, kind) => {
      const own = createRedisAdapter({ connection: server.url, prefix, scripting });
      try {
        const q = await own.lane(`flush-${randomUUID().slice(0, 8)}`, opts);
        await q.put([job()]);
        await raw.call(kind, "FLUSH");
        const calls = await commandCalls(raw);
        const r = await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 });
        expect(r.jobs).toHaveLength(1);
        await raw.call(kind, "FLUSH");
        expect(await q.ack([r.jobs[0]!.lock])).toEqual(["ok"]);
        const after = await commandCalls(raw);
        // each call met the missing code once and ran again: the library loaded, or EVAL
        if (scripting === "functions") expect(after.fcall - calls.fcall).toBe(4);
        else expect([after.fcall - calls.fcall, after.eval - calls.eval]).toEqual([0, 2]);
      } finally {
        await own.close();
      }
    },
  );

  it("refuse an unknown scripting mode, naming the option", () => {
    expect(() =>
      createRedisAdapter({ connection: server.url, scripting: "lua" as "eval" }),
    ).toThrow(ConfigError);
    expect(() =>
      createRedisAdapter({ connection: server.url, scripting: "lua" as "eval" }),
    ).toThrow(/scripting/);
  });

  it("keep every key of a lane in one hash slot, under the prefix", () => {
    const keys = laneKeys("pre", "emails");
    for (const key of keys.all) {
      expect(key.startsWith("pre:{pre:emails}:")).toBe(true);
    }
  });

  it("bucket stats exactly like core (the Lua bucketIndex mirrors stats.ts)", async () => {
    const common = readFileSync(new URL("../src/lua/_common.lua", import.meta.url), "utf8");
    const from = common.indexOf("local SMALL_BOUNDS");
    const to = common.indexOf("local waitSamples");
    const samples = [-5, 0, 0.5, 1, 1.5, 499, 500, 999.9, 1000, 59_999, 60_000, 3_599_999];
    for (const bound of HISTOGRAM_BOUNDS_MS) {
      if (Number.isFinite(bound)) samples.push(bound - 1, bound, bound + 1);
    }
    samples.push(604_800_000 * 3);
    const lua = `${common.slice(from, to)}
      local out = {}
      for i = 1, #ARGV do out[i] = bucketIndex(tonumber(ARGV[i])) end
      return out`;
    const got = (await raw.eval(lua, 0, ...samples.map(String))) as number[];
    expect(got).toEqual(samples.map((ms) => bucketIndex(ms)));
  });

  it("knows the byte positions the fast paths patch and decode reads (_common.lua)", async () => {
    const common = readFileSync(new URL("../src/lua/_common.lua", import.meta.url), "utf8");
    const from = common.indexOf("local HEADER_FIXED");
    const to = common.indexOf("-- states");
    const lua = `${common.slice(from, to)}
      return {
        AT_HCOUNT, struct.size(">BHHB") + 1, AT_FIN, struct.size(">BHHBBI4") + 1,
        AT_EXP, struct.size(">BHHBBI4d") + 1, HEADER_LEN, struct.size(HEADER),
        struct.size(HEADER_FIXED), PREFIX_LEN, struct.size(PREFIX), PREFIX_ORDER,
        -- the formats written out as literals (see _common.lua) are the ones they spell
        HEADER == HEADER_FIXED .. string.sub(HEADER_REST, 2) and 1 or 0,
        FRESH == ">B" .. string.sub(PREFIX, 2) and 1 or 0,
      }`;
    const reply = (await raw.eval(lua, 0)) as Array<number | string>;
    expect(reply.slice(-2)).toEqual([1, 1]);
    const [hcount, hcountWant, fin, finWant, exp, expWant, len, lenWant, fixed, ...prefix] =
      reply.slice(0, -2) as [...number[], string];
    expect([hcount, fin, exp, len]).toEqual([hcountWant, finWant, expWant, lenWant]);
    // the body's prefix: its length, and decode()'s priority and seq are its first fields
    expect(prefix).toEqual([20, 20, ">hI6"]);
    // the fixed part ends right after reservedAt, where the token starts
    expect(fixed).toBe((expWant as number) - 1 + 16);
  });

  it("folds a call's samples into a stored summary as core's addSample would", async () => {
    const common = readFileSync(new URL("../src/lua/_common.lua", import.meta.url), "utf8");
    const from = common.indexOf("local SMALL_BOUNDS");
    const to = common.indexOf("function flushStats()");
    const first = [0, 0.4, 3, 3, 250, 1_200, 1_200, 61_000];
    const second = [7, 3, 90_000_000, 1_200];
    const lua = `${common.slice(from, to)}
      local a, b = {}, {}
      local n = tonumber(ARGV[1])
      for i = 2, #ARGV do
        if i <= n + 1 then a[#a + 1] = tonumber(ARGV[i]) else b[#b + 1] = tonumber(ARGV[i]) end
      end
      local once = foldSummary(nil, a)
      return { once, foldSummary(once, b) }`;
    const args = [first.length, ...first, ...second].map(String);
    const [once, twice] = (await raw.callBuffer("EVAL", lua, "0", ...args)) as Buffer[];
    const want = emptySummary();
    for (const ms of first) addSample(want, ms);
    const check = (got: ReturnType<typeof parseSummary>) => {
      expect(got.count).toBe(want.count);
      expect(got.mean).toBeCloseTo(want.mean, 9);
      expect(got.m2 / want.m2).toBeCloseTo(1, 12);
      expect(got.histogram).toEqual(want.histogram);
    };
    check(parseSummary(once ?? null));
    for (const ms of second) addSample(want, ms);
    check(parseSummary(twice ?? null));
  });

  it("are loaded when an EVAL-mode adapter starts, so first calls run by SHA; the operator features' at their first call", async () => {
    await raw.script("FLUSH");
    const own = createRedisAdapter({ connection: server.url, prefix, scripting: "eval" });
    try {
      const q = await own.lane("loaded", opts); // resolves once the adapter has started
      const operator = ["watch", "set-priority", "promote", "workers", "report"];
      operator.push("move-out", "move-in", "move-done");
      const loaded = Object.entries(SCRIPTS).map(([name, s]) => [name, s.sha] as const);
      expect(await raw.script("EXISTS", ...loaded.map(([, sha]) => sha))).toEqual(
        loaded.map(([name]) => (operator.includes(name) ? 0 : 1)),
      );
      expect(await q.promote(["nobody"])).toEqual(["not_found"]);
      expect(await raw.script("EXISTS", SCRIPTS.promote.sha)).toEqual([1]);
    } finally {
      await own.close();
    }
  });

  it("send a lane's prepared call with every argument intact, by SHA after one EVAL", async () => {
    const { ScriptCall, runCall } = await import("../src/scripts.ts");
    // A script no server has seen (its first call meets NOSCRIPT and is EVALed), echoing
    // what it received: the later calls go out as the prepared bytes alone.
    const source = `-- ${randomUUID()}\nreturn {KEYS, ARGV}`;
    const sha = createHash("sha1").update(source).digest("hex");
    const echo = { name: "echo", source, sha, fn: "echo" };
    const keys = ["t:{t:q}:m", "t:{t:q}:ü"];
    const fixed = ["q", "", "naïve ✓", "a\r\nb"];
    const own = [Buffer.from("x\r\ny\0z"), 42, "", "€".repeat(3000), Buffer.alloc(0), "$3\r\n"];
    const sent = [...fixed, ...own].map((arg) =>
      Buffer.isBuffer(arg) ? arg.toString() : String(arg),
    );
    const call = new ScriptCall(echo, keys, fixed);
    for (let i = 0; i < 3; i++) {
      expect(await runCall(raw, call, own, "echo", "eval")).toEqual([keys, sent]);
    }
    expect(await raw.script("EXISTS", sha)).toEqual([1]);
    // ioredis prefixes keys as it builds its commands: a client with a keyPrefix gets them.
    const prefixed = new Redis({ host: server.host, port: server.port, keyPrefix: "pre:" });
    try {
      expect(await runCall(prefixed, call, own, "echo", "eval")).toEqual([
        keys.map((key) => `pre:${key}`),
        sent,
      ]);
    } finally {
      prefixed.disconnect();
    }
  });

  it("map a script's own error code through the error table", async () => {
    const keys = laneKeys(prefix, "bad-args").all;
    const common = ["bad-args", "1", "1", "0", "-1,-1,-1,-1,-1,-1", ""];
    const { runScript } = await import("../src/scripts.ts");
    await expect(
      runScript(raw, SCRIPTS.ack, keys, [...common, "only-an-id"], "ack"),
    ).rejects.toThrow(/bad argument/);
    // a lock's token is 8 packed bytes: 7 for one id, or none, is refused
    for (const [script, args] of [
      [SCRIPTS.ack, [...common, "an-id", Buffer.alloc(7)]],
      [SCRIPTS.release, [...common, "an-id", "another-id", Buffer.alloc(8)]],
      [SCRIPTS.extend, [...common, "1000"]],
    ] as const) {
      await expect(runScript(raw, script, keys, [...args], script.name)).rejects.toThrow(
        /bad argument/,
      );
    }
  });

  it("matches lock tokens sent packed: a wrong or non-numeric token is lost", async () => {
    const q = await fresh();
    await q.put([job(), job()]);
    const [a, b] = (await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 })).jobs;
    if (!a || !b) throw new Error("two jobs reserved");
    const wrong = { ...a.lock, token: String(Number(a.lock.token) + 1) };
    const text = { ...b.lock, token: "not-a-number" };
    expect(await q.extend([wrong, text], 20_000)).toEqual(["lost", "lost"]);
    expect(await q.ack([wrong, text])).toEqual(["lost", "lost"]);
    expect(await q.release([{ lock: text, uncounted: true }])).toEqual(["lost"]);
    expect(await q.counts()).toMatchObject({ active: 2 });
    // the second of two locks in one call is read at its own 8 bytes
    expect(await q.extend([a.lock, b.lock], 20_000)).toEqual(["ok", "ok"]);
    expect(await q.ack([wrong, b.lock])).toEqual(["lost", "ok"]);
    expect(await q.release([{ lock: a.lock, uncounted: true }])).toEqual(["ok"]);
    expect(await q.counts()).toMatchObject({ waiting: 1, active: 0, succeeded: 1 });
  });

  it("refuse a put whose jobs are neither packed whole nor 5 arguments each", async () => {
    const keys = laneKeys(prefix, "bad-layout").all;
    const common = ["bad-layout", "1", "1", "0", "-1,-1,-1,-1,-1,-1", ""];
    const { runScript } = await import("../src/scripts.ts");
    const { packJobs } = await import("../src/put-batch.ts");
    const packed = packJobs([job(), job()]);
    const refused = [
      ["3", "id", "text", "0"],
      ["5", "id", "text", "0", ""],
      ["p", "0", "", "1"],
      ["p", "0", "", "1", packed.subarray(0, packed.length - 1)],
      ["p", "0", "", "1", packed, "extra"],
    ];
    for (const layout of refused) {
      await expect(
        runScript(raw, SCRIPTS.put, keys, [...common, "0", ...layout], "put"),
      ).rejects.toThrow(/bad argument/);
    }
    // eight jobs are read per struct.unpack while eight remain: a batch cut in its last
    // job after two such groups is refused whole too
    const seventeen = packJobs(Array.from({ length: 17 }, () => job()));
    await expect(
      runScript(
        raw,
        SCRIPTS.put,
        keys,
        [...common, "0", "p", "0", "", "1", seventeen.subarray(0, seventeen.length - 1)],
        "put",
      ),
    ).rejects.toThrow(/bad argument/);
    // nothing was written, and a whole packed batch goes in
    expect(await raw.exists(...keys)).toBe(0);
    expect(
      await runScript(raw, SCRIPTS.put, keys, [...common, "0", "p", "0", "", "1", packed], "put"),
    ).toBe(2);
  });

  it("refuses lane names that would break the hash tag", async () => {
    await expect(adapter.lane("a{b}", opts)).rejects.toBeInstanceOf(ConfigError);
  });
});

describe("ordering", () => {
  it("puts a delayed job that fell due before later puts of the same priority", async () => {
    const q = await fresh();
    const early = job({ runAt: Date.now() + 150 });
    await q.put([early]);
    await waitFor(async () => Date.now() > (early.runAt as number) + 20, "the due time");
    const later = job();
    await q.put([later]);
    const got = await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => j.id)).toEqual([early.id, later.id]);
  });

  it("hands a job whose holder died out first again, ahead of a backlog of 20,000", async () => {
    const q = await fresh();
    const publishedAt = Date.now();
    const jobs = Array.from({ length: 20_001 }, (_, n) =>
      job({ freshId: true, publishedAt, payload: `{"n":${n}}` }),
    );
    for (let i = 0; i < jobs.length; i += 1_000) await q.put(jobs.slice(i, i + 1_000));
    // a worker takes the first job and dies: its lease simply runs out
    const [held] = (await q.reserve({ limit: 1, leaseMs: 300, waitMs: 0 })).jobs;
    expect(held?.id).toBe(jobs[0]?.id);
    await waitFor(async () => (await q.counts()).active === 0, "the lease to run out");
    const got = await q.reserve({ limit: 3, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => [j.id, j.attempt])).toEqual([
      [jobs[0]?.id, 2],
      [jobs[1]?.id, 1],
      [jobs[2]?.id, 1],
    ]);
    expect(got.ready).toBe(19_998);
  });

  it("merges late arrivals with the list by due time and put order, past tombstones", async () => {
    const q = await fresh();
    const error = { name: "E", message: "m", reason: "error" as const };
    const publishedAt = Date.now();
    // one by-ref call (fresh ids, one publishedAt, due now): j0..j9 share their due time
    const j = Array.from({ length: 10 }, () => job({ freshId: true, publishedAt }));
    const names = new Map(j.map((x, i) => [x.id, `j${i}`]));
    await q.put(j);
    expect(await q.cancel([j[1]!.id, j[4]!.id])).toEqual(["canceled", "canceled"]);
    const first = (await q.reserve({ limit: 3, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(first.map((x) => names.get(x.id))).toEqual(["j0", "j2", "j3"]);
    const lockOf = (i: number) => first.find((x) => x.id === j[i]!.id)!.lock;
    await waitFor(() => Date.now() > publishedAt + 2, "the clock to move");
    const runAt = Date.now();
    await waitFor(() => Date.now() > runAt + 2, "the clock to move");
    const k = [job(), job(), job()];
    for (const [i, x] of k.entries()) {
      names.set(x.id, `k${i}`);
      await q.put([x]);
    }
    // all three are late: due before the list's last job (k2)
    expect(
      await q.release([lockOf(3), lockOf(0)].map((lock) => ({ lock, uncounted: true as const }))),
    ).toEqual(["ok", "ok"]);
    expect(await q.nack([{ lock: lockOf(2), runAt, error }])).toEqual(["ok"]);
    expect(await raw.zcount(laneKeys(prefix, q.name).all[3] as string, 0, 0)).toBe(3);
    expect(await q.counts()).toMatchObject({ waiting: 11, canceled: 2 });
    const order: string[] = [];
    for (;;) {
      const got = await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 });
      if (got.jobs.length === 0) break;
      for (const x of got.jobs) order.push(`${names.get(x.id)}:${x.attempt}`);
    }
    expect(order).toEqual([
      "j0:1",
      "j3:1",
      "j5:1",
      "j6:1",
      "j7:1",
      "j8:1",
      "j9:1",
      "j2:2",
      "k0:1",
      "k1:1",
      "k2:1",
    ]);
    expect(await raw.exists(laneKeys(prefix, q.name).all[3] as string)).toBe(0);
    expect(await raw.llen(laneKeys(prefix, q.name).all[2] as string)).toBe(0);
  });

  /**
   * The records of `jobs` (from index `from`) are waiting records as put writes them: fresh
   * (state, priority, seq = index + 1, putAt from `before` on, publishedAt, the text), or,
   * with `byRef`, by ref (7, the index in its call, the call's ref, the text), whose call
   * header holds what makes the fresh record's fields (priority, seq base, putAt,
   * publishedAt) and counts exactly the records that refer to it.
   */
  async function expectFreshRecords(
    name: string,
    jobs: NewJob[],
    at: { publishedAt: number; before: number; from?: number; byRef?: boolean },
  ): Promise<void> {
    const keys = laneKeys(prefix, name).all;
    const records = await raw.hmgetBuffer(keys[1] as string, ...jobs.map((j) => encodeId(j.id)));
    const refCounts = new Map<string, number>();
    for (const [i, record] of records.entries()) {
      const want = jobs[i] as NewJob;
      if (!record) throw new Error(`no record for job ${i}`);
      if (i < (at.from ?? 0)) continue;
      let fresh = record;
      if (at.byRef) {
        expect(record[0]).toBe(7);
        const ref = record.subarray(3, 11);
        refCounts.set(ref.toString("hex"), (refCounts.get(ref.toString("hex")) ?? 0) + 1);
        const call = await raw.hgetBuffer(keys[11] as string, ref);
        if (!call) throw new Error(`no call header for job ${i}`);
        expect(call).toHaveLength(24);
        const seq = Buffer.alloc(6);
        seq.writeUIntBE(call.readUIntBE(2, 6) + record.readUInt16BE(1), 0, 6);
        fresh = Buffer.concat([
          Buffer.from([1]),
          call.subarray(0, 2),
          seq,
          call.subarray(8, 20),
          record.subarray(11),
        ]);
      }
      expect(fresh[0]).toBe(1); // a fresh record, waiting
      expect(fresh.readInt16BE(1)).toBe(want.priority);
      expect(fresh.readUIntBE(3, 6)).toBe(i + 1); // seq
      expect(fresh.readUIntBE(9, 6)).toBeGreaterThanOrEqual(at.before - 1_000); // putAt
      expect(fresh.readUIntBE(9, 6)).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(fresh.readIntBE(15, 6)).toBe(at.publishedAt);
      expect(fresh.subarray(21).toString()).toBe(`1:-:t${want.payload}`);
    }
    for (const [ref, count] of refCounts) {
      const call = await raw.hgetBuffer(keys[11] as string, Buffer.from(ref, "hex"));
      expect(call?.readUInt32BE(20)).toBe(count); // records left by ref
    }
  }

  it("stores a shared-field batch's records as the per-job layout does, seq counting on", async () => {
    const name = `q-${randomUUID().slice(0, 8)}`;
    const q = await adapter.lane(name, opts);
    const publishedAt = Date.now() - 5_000;
    const before = Date.now();
    // 300 jobs in one call: seq 1..300 crosses the wrap of its low byte at 256. One job
    // named twice (the second copy refused) makes the per-job reply start midway.
    const shared = Array.from({ length: 300 }, (_, i) =>
      job({ payload: `{"n":${i}}`, publishedAt }),
    );
    const again = shared[5] as NewJob;
    const statuses = (await q.put([...shared.slice(0, 200), again, ...shared.slice(200)])).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === "duplicate")).toHaveLength(1);
    expect(statuses[200]).toBe("duplicate");
    // the same fields per job (mixed priorities: 5 arguments per job), then shared again
    // with a priority (the zset)
    const perJob = [job({ priority: 3, publishedAt }), job({ publishedAt })];
    const prioritized = [job({ priority: -2, publishedAt }), job({ priority: -2, publishedAt })];
    await q.put(perJob);
    await q.put(prioritized);
    const all = [...shared, ...perJob, ...prioritized];
    await expectFreshRecords(name, all, { publishedAt, before });
    const got = await q.reserve({ limit: 400, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => j.id)).toEqual(
      [perJob[0], ...shared, perJob[1], ...prioritized].map((j) => j?.id),
    );
  });

  it("stores a fresh-id batch's records likewise, after a delayed job due in the same call", async () => {
    const name = `q-${randomUUID().slice(0, 8)}`;
    const q = await adapter.lane(name, opts);
    const publishedAt = Date.now() - 5_000;
    const before = Date.now();
    const early = job({ runAt: Date.now() + 150, publishedAt });
    await q.put([early]);
    await waitFor(async () => Date.now() > (early.runAt as number) + 20, "the due time");
    // The put that follows promotes `early` first (seq 1), then appends 300 fresh ids
    // (seq 2..301, across the low byte's wrap) behind it; then fresh ids with a shared
    // priority below and above 0 go to the zset.
    const fresh = (n: number, priority = 0) =>
      Array.from({ length: n }, (_, i) =>
        job({ freshId: true, priority, payload: `{"n":${i}}`, publishedAt }),
      );
    const listed = fresh(300);
    const low = fresh(2, -2);
    const high = fresh(2, 5);
    for (const batch of [listed, low, high]) {
      expect(await q.put(batch)).toEqual(batch.map((j) => ({ id: j.id, status: "created" })));
    }
    const all = [early, ...listed, ...low, ...high];
    // early (seq 1) was delayed: its record has the header layout; the fresh-id batches'
    // records are by ref, one call header each
    await expectFreshRecords(name, all, { publishedAt, before, from: 1, byRef: true });
    const callHeaders = laneKeys(prefix, name).all[11] as string;
    expect(await raw.hlen(callHeaders)).toBe(3);
    const got = await q.reserve({ limit: 400, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => j.id)).toEqual([...high, early, ...listed, ...low].map((j) => j.id));
    expect(got.jobs.map((j) => j.payload)).toEqual(
      [...high, early, ...listed, ...low].map((j) => j.payload),
    );
    expect(await q.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 305 });
    // every record was rewritten at its reservation: no header is left
    expect(await raw.exists(callHeaders)).toBe(0);
  });

  it("puts a deleted or retired waiting job's id at the back when it is put again, listed once", async () => {
    const q = await fresh();
    const ids = async () => {
      const out: string[] = [];
      for await (const info of q.list({ state: "waiting", pageSize: 2 })) out.push(info.id);
      return out;
    };
    const [a, b, c, d] = [job(), job(), job(), job()];
    await q.put([a, b, c]);
    // a is deleted while waiting; c is canceled, then its record removed as retention would
    expect(await q.delete([a.id])).toBe(1);
    expect(await q.cancel([c.id])).toEqual(["canceled"]);
    expect(await q.delete([c.id])).toBe(1);
    await q.put([d]);
    // both ids again, while their tombstones are still in the list ahead of b
    expect((await q.put([a, c])).map((r) => r.status)).toEqual(["created", "created"]);
    expect(await ids()).toEqual([b.id, d.id, a.id, c.id]);
    expect(await q.counts()).toMatchObject({ waiting: 4 });
    const got = await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => j.id)).toEqual([b.id, d.id, a.id, c.id]);
    // the tombstones were counted down as they were popped
    const keys = laneKeys(prefix, q.name).all;
    expect(await raw.exists(keys[12] as string, keys[2] as string)).toBe(0);
    expect(await q.counts()).toMatchObject({ waiting: 0, active: 4 });
  });

  it("counts a put call's header down by every way its records leave, and drops it with the last", async () => {
    const q = await fresh();
    const publishedAt = Date.now() - 1_000;
    const batch = Array.from({ length: 6 }, (_, i) =>
      job({ freshId: true, payload: `{"n":${i}}`, publishedAt }),
    );
    const [a, b, c, d] = batch as [NewJob, NewJob, NewJob, NewJob];
    await q.put(batch);
    const keys = laneKeys(prefix, q.name).all;
    const left = async () => {
      const values = await raw.hvalsBuffer(keys[11] as string);
      return values.map((v) => v.readUInt32BE(20));
    };
    expect(await left()).toEqual([6]);
    // read only: get, list, and a put naming one of its ids
    expect(await q.get(c.id)).toMatchObject({ state: "waiting", payload: c.payload, publishedAt });
    let listed = 0;
    for await (const info of q.list({ state: "waiting" }))
      if (info.publishedAt === publishedAt) listed++;
    expect(listed).toBe(6);
    expect(await q.put([{ ...c, freshId: false }])).toEqual([{ id: c.id, status: "duplicate" }]);
    expect(await left()).toEqual([6]);
    // a cancel rewrites a's record, a delete removes b's
    expect(await q.cancel([a.id])).toEqual(["canceled"]);
    expect(await q.delete([b.id])).toBe(1);
    expect(await left()).toEqual([4]);
    // reserve takes c and d from their by-ref records, payload and publishedAt intact
    const got = await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => [j.id, j.payload, j.publishedAt])).toEqual(
      [c, d].map((j) => [j.id, j.payload, publishedAt]),
    );
    expect(await left()).toEqual([2]);
    await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    expect(await raw.exists(keys[11] as string)).toBe(0);
    expect(await q.counts()).toMatchObject({ waiting: 0, active: 4, canceled: 1 });
  });

  it("stores a by-ref put whose call ref is taken as fresh records, as layout p would", async () => {
    const q = await fresh();
    const keys = laneKeys(prefix, q.name).all;
    const common = [q.name, "1", "1", "0", "-1,-1,-1,-1,-1,-1", ""];
    const { runScript } = await import("../src/scripts.ts");
    const { packJobs } = await import("../src/put-batch.ts");
    const publishedAt = Date.now();
    const batch = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        job({ freshId: true, payload: `{"n":${i}}`, publishedAt }),
      );
    const ref = Buffer.from("same-ref");
    const [first, second] = [batch(3), batch(2)];
    // app data in both layouts' records: after the by-ref head, and in a fresh record
    first[1]!.appData = '{"trace":"a"}';
    second[0]!.appData = '{"trace":"b"}';
    for (const jobs of [first, second]) {
      const args = [...common, "f", "r", "0", "", String(publishedAt), ref, packJobs(jobs, ref)];
      expect(await runScript(raw, SCRIPTS.put, keys, args, "put")).toBe(jobs.length);
    }
    // the first call's records are by ref; the second's, whose ref was taken, fresh
    const records = await raw.hmgetBuffer(
      keys[1] as string,
      ...[...first, ...second].map((j) => encodeId(j.id)),
    );
    expect(records.map((r) => r?.[0])).toEqual([7, 7, 7, 1, 1]);
    expect((await raw.hgetBuffer(keys[11] as string, ref))?.readUInt32BE(20)).toBe(3);
    const got = await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => [j.id, j.payload, j.appData, j.malformed])).toEqual(
      [...first, ...second].map((j) => [j.id, j.payload, j.appData, undefined]),
    );
    expect(await raw.exists(keys[11] as string)).toBe(0);
  });

  it("hands out a by-ref record whose call header is gone as malformed, and goes on", async () => {
    const q = await fresh();
    const batch = [job({ freshId: true }), job({ freshId: true })];
    const publishedAt = batch[0]!.publishedAt;
    for (const j of batch) j.publishedAt = publishedAt;
    await q.put(batch);
    // a foreign writer deletes the call headers
    await raw.del(laneKeys(prefix, q.name).all[11] as string);
    const got = (await q.reserve({ limit: 5, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(got.map((j) => j.id)).toEqual(batch.map((j) => j.id));
    for (const j of got) expect(j.malformed).toMatch(/not one tasklane wrote/);
    // the lane keeps working
    const next = job();
    await q.put([next]);
    const more = (await q.reserve({ limit: 5, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(more.map((j) => [j.id, j.malformed])).toEqual([[next.id, undefined]]);
  });

  it("packs any id, task, appData and payload text into a batch and reads them back", async () => {
    const q = await fresh();
    // one publishedAt: the batch shares its fields, so it goes packed (layout "p")
    const publishedAt = Date.now();
    const batch = [
      { id: "plain" },
      { id: "~tilde", task: "tâche", payload: '{"s":"ü€😀"}' },
      { id: "ü€😀", appData: '{"trace":"é"}' },
      { id: "x".repeat(128), task: "t".repeat(300), payload: `"${"y".repeat(70_000)}"` },
      {},
    ].map((over) => job({ ...over, publishedAt }));
    expect((await q.put(batch)).map((r) => r.status)).toEqual(batch.map(() => "created"));
    const got = await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => [j.id, j.task, j.payload, j.appData])).toEqual(
      batch.map((j) => [j.id, j.task, j.payload, j.appData]),
    );
  });

  it("packs a batch too big for the shared scratch buffer into one of its own", async () => {
    const q = await fresh();
    const publishedAt = Date.now();
    // 20 payloads of 100 kB: past the 1 MiB the shared buffer grows to
    const batch = Array.from({ length: 20 }, (_, i) =>
      job({ payload: `"${String(i).repeat(100_000)}"`, publishedAt }),
    );
    expect((await q.put(batch)).map((r) => r.status)).toEqual(batch.map(() => "created"));
    // and the next (small) batch still packs through the shared buffer
    const small = [job({ publishedAt }), job({ publishedAt })];
    await q.put(small);
    const got = await q.reserve({ limit: 100, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => [j.id, j.payload])).toEqual(
      [...batch, ...small].map((j) => [j.id, j.payload]),
    );
  });

  it("reads fields a whole batch shares (sent once) as if they were sent per job", async () => {
    const q = await fresh();
    const publishedAt = Date.now() - 5_000;
    const runAt = Date.now() + 60_000;
    const shared = [job({ priority: 4, publishedAt }), job({ priority: 4, publishedAt })];
    const delayed = [job({ runAt, publishedAt }), job({ runAt, publishedAt })];
    const mixed = [job({ priority: 4, publishedAt }), job({ priority: 1, publishedAt })];
    for (const batch of [shared, delayed, mixed]) {
      expect((await q.put(batch)).map((r) => r.status)).toEqual(["created", "created"]);
    }
    const got = await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => [j.id, j.priority, j.publishedAt])).toEqual(
      [shared[0], shared[1], mixed[0], mixed[1]].map((j) => [j!.id, j!.priority, publishedAt]),
    );
    expect(await q.counts()).toMatchObject({ waiting: 0, delayed: 2, active: 4 });
  });

  it("serves priorities above 0, then 0, then below 0, FIFO inside each", async () => {
    const q = await fresh();
    const jobs = [
      job({ priority: -5 }),
      job({ priority: 0 }),
      job({ priority: 1000 }),
      job({ priority: 3 }),
      job({ priority: 0 }),
      job({ priority: 3 }),
      job({ priority: -1000 }),
    ];
    await q.put(jobs);
    const got = await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    const order = [2, 3, 5, 1, 4, 0, 6].map((i) => jobs[i]!.id);
    expect(got.jobs.map((j) => j.id)).toEqual(order);
    expect(got.ready).toBe(0);
  });

  it("hands out an id listed twice (deleted, then put again) once, with its new priority", async () => {
    const q = await fresh();
    const [a, b, c] = [job(), job(), job()];
    await q.put([a, b]);
    expect(await q.delete([a.id])).toBe(1);
    // a's first list entry is now a tombstone; the new a waits with priority 2, then 0
    await q.put([{ ...a, priority: 2 }, c]);
    const first = await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    expect(first.jobs.map((j) => [j.id, j.priority])).toEqual([
      [a.id, 2],
      [b.id, 0],
      [c.id, 0],
    ]);
    expect(first.ready).toBe(0);
    expect(await q.delete([b.id])).toBe(0); // active
    const error = { name: "Error", message: "x", reason: "error" as const };
    await q.nack([{ lock: first.jobs[1]!.lock, dead: true, error }]);
    expect(await q.delete([b.id])).toBe(1);
    await q.put([b, { ...b, id: randomUUID() }]);
    // b listed twice (a tombstone, then live): one delivery
    const second = await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    expect(second.jobs.filter((j) => j.id === b.id)).toHaveLength(1);
    expect(second.jobs).toHaveLength(2);
    expect(await q.counts()).toMatchObject({ waiting: 0, active: 4 });
  });

  it("reads a packed batch whole, eight jobs at a time and the rest one by one", async () => {
    const q = await fresh();
    // one publishedAt: the jobs share their fields, so they go packed (layout "p")
    const jobs = Array.from({ length: 21 }, (_, i) =>
      job({ payload: JSON.stringify({ i }), publishedAt: 1 }),
    );
    expect(await q.put(jobs)).toEqual(jobs.map((j) => ({ id: j.id, status: "created" })));
    const got = (await q.reserve({ limit: 100, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(got.map((j) => [j.id, j.payload])).toEqual(jobs.map((j) => [j.id, j.payload]));
  });

  it("sends puts made in one turn of the event loop as one call, each with its results", async () => {
    const q = await fresh();
    const warm = job();
    await q.put([warm]); // the library is loaded: one FCALL per call from here on
    const calls = async () => (await commandCalls(raw)).fcall;
    const before = await calls();
    const singles = Array.from({ length: 50 }, () => job());
    const pair = [job(), singles[3] as NewJob]; // the second names a job put just before
    const results = await Promise.all([
      ...singles.map((j) => q.put([j])),
      q.put(pair),
      q.put([job({ priority: 7, publishedAt: 1 })]), // fields unlike the others'
    ]);
    expect((await calls()) - before).toBe(1);
    expect(results.slice(0, 50)).toEqual(singles.map((j) => [{ id: j.id, status: "created" }]));
    expect(results[50]).toEqual([
      { id: pair[0]?.id, status: "created" },
      { id: singles[3]?.id, status: "duplicate" },
    ]);
    expect(results[51]?.[0]?.status).toBe("created");
    const got = await q.reserve({ limit: 100, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => j.id)).toEqual([
      results[51]?.[0]?.id,
      warm.id,
      ...singles.map((j) => j.id),
      pair[0]?.id,
    ]);
    // A call holds whole puts of at most 1,000 jobs: 600 + 400, then 600.
    const many = (n: number) => Array.from({ length: n }, () => job({ publishedAt: 1 }));
    const beforeMany = await calls();
    const sizes = await Promise.all([many(600), many(400), many(600)].map((b) => q.put(b)));
    expect(sizes.map((r) => r.length)).toEqual([600, 400, 600]);
    expect((await calls()) - beforeMany).toBe(2);
  });

  it("carries out a put made in the same tick as close()", async () => {
    const name = `q-${randomUUID().slice(0, 8)}`;
    const own = createRedisAdapter({ connection: server.url, prefix });
    const q = await own.lane(name, opts);
    // No script cached: the put's EVALSHA meets NOSCRIPT and its EVAL goes out after close()
    await raw.script("FLUSH");
    const put = job();
    const putting = q.put([put]);
    await own.close();
    expect(await putting).toEqual([{ id: put.id, status: "created" }]);
    expect((await (await adapter.lane(name, opts)).get(put.id))?.state).toBe("waiting");
  });

  it("fails every put a failed call carried, and writes none of their jobs", async () => {
    const q = await fresh();
    // Out of memory: the one call carrying all three puts (made in one tick) is refused.
    await raw.config("SET", "maxmemory", String(1));
    try {
      const puts = [q.put([job()]), q.put([job()]), q.put([job(), job()])];
      for (const put of puts) await expect(put).rejects.toBeInstanceOf(RedisOutOfMemoryError);
    } finally {
      await raw.config("SET", "maxmemory", "0");
    }
    expect(await q.probe()).toBe(0);
  });

  it("extends current locks in place, and answers lost, canceled and repeated ones", async () => {
    const name = `q-${randomUUID().slice(0, 8)}`;
    const q = await adapter.lane(name, opts);
    await q.put([job(), job(), job()]);
    const { jobs } = await q.reserve({ limit: 3, leaseMs: 10_000, waitMs: 0 });
    const [x, y, z] = jobs.map((j) => j.lock) as [Lock, Lock, Lock];
    expect(await q.cancel([z.jobId])).toEqual(["canceled"]);
    const stale = { ...y, token: String(Number(y.token) + 100) };
    const before = Date.now();
    expect(await q.extend([x, stale, z], 60_000)).toEqual(["ok", "lost", "canceled"]);
    // the lease moved in the active zset and in the record's header (expiresAt, a double
    // at byte AT_EXP = 20): both say the same time, a minute on
    const keys = laneKeys(prefix, name).all;
    const score = Number(await raw.zscore(keys[5] as string, encodeId(x.jobId)));
    const record = (await raw.hgetBuffer(keys[1] as string, encodeId(x.jobId))) as Buffer;
    expect(record.readDoubleBE(19)).toBe(score);
    expect(score).toBeGreaterThanOrEqual(before + 60_000 - 1_000);
    expect(score).toBeLessThanOrEqual(Date.now() + 60_000 + 1_000);
    // a lock named twice in one call (the general path) is extended once: lost after its
    // first use, as in ack, nack and release
    expect(await q.extend([y, y], 30_000)).toEqual(["ok", "lost"]);
    expect(await q.ack([x, y])).toEqual(["ok", "ok"]);
  });

  it("answers a lock named twice in one ack once", async () => {
    const q = await fresh();
    await q.put([job(), job()]);
    const { jobs } = await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 });
    const [x, y] = jobs.map((j) => j.lock);
    expect(await q.ack([x!, y!, x!])).toEqual(["ok", "ok", "lost"]);
    expect(await q.counts()).toMatchObject({ active: 0, succeeded: 2 });
  });
});

// Several round trips each, and waits for the server to show a poll blocked: more than
// the default 5 s on a loaded machine.
describe("long polls", { timeout: 20_000 }, () => {
  it("a job put into an empty lane reaches an idle worker within milliseconds", async () => {
    const q = await fresh();
    const { poll } = await blockedPoll(() =>
      q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 20_000 }),
    );
    const started = performance.now();
    const put = job();
    await q.put([put]);
    const r = await poll;
    expect(r.jobs[0]?.id).toBe(put.id);
    // Generous bound for a loaded CI machine; typically well under 5 ms.
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("a delayed job falling due ends the block", async () => {
    const q = await fresh();
    const put = job({ runAt: Date.now() + 300 });
    await q.put([put]);
    const started = performance.now();
    const r = await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 20_000 });
    expect(r.jobs[0]?.id).toBe(put.id);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("ends a block for a job falling due from here, not on redis-server's clock tick", async () => {
    const unblocks = async () =>
      Number(/cmdstat_client\|unblock:calls=(\d+)/.exec(await raw.info("commandstats"))?.[1] ?? 0);
    const q = await fresh();
    const put = job({ runAt: Date.now() + 300 });
    await q.put([put]);
    // nothing to take: the reply says when the job falls due, in this process's clock
    const empty = await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 });
    expect(empty).toMatchObject({ jobs: [], ready: 0 });
    // (late only by as much as the reply took to arrive: the first one this lane saw)
    expect(empty.nextDueAt).toBeGreaterThan((put.runAt as number) - 1_000);
    expect(empty.nextDueAt).toBeLessThanOrEqual((put.runAt as number) + 1_000);
    // BLPOP's own timeout would end the block on the server's next clock tick, at hz 1 up
    // to a second late: the adapter ends it at the due time
    await raw.config("SET", "hz", "1");
    try {
      const before = await unblocks();
      const r = await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 20_000 });
      expect(r.jobs[0]?.id).toBe(put.id);
      expect(await unblocks()).toBeGreaterThan(before);
    } finally {
      await raw.config("SET", "hz", "10");
    }
  });

  it("an earlier delayed job put by another process shortens a long block", async () => {
    const q = await fresh();
    await q.put([job({ runAt: Date.now() + 60_000 })]);
    const { poll } = await blockedPoll(() =>
      q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 20_000 }),
    );
    const soon = job({ runAt: Date.now() + 200 });
    const other = createRedisAdapter({ connection: server.url, prefix });
    try {
      await (await other.lane(q.name, opts)).put([soon]);
    } finally {
      await other.close();
    }
    const started = performance.now();
    const r = await poll;
    expect(r.jobs[0]?.id).toBe(soon.id);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("abort ends the poll at once and the connection serves the next poll", async () => {
    const q = await fresh();
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const poll = q.reserve({
        limit: 1,
        leaseMs: 1_000,
        waitMs: 20_000,
        signal: controller.signal,
      });
      // Aborted whether or not it has blocked yet: both must end at once. (The poll after
      // an aborted one blocks: a count of blocked polls missed it when the aborted one's
      // block ended between the same two readings; see untilBlocked.)
      setTimeout(() => controller.abort(), 30);
      const started = performance.now();
      expect((await poll).jobs).toEqual([]);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    const put = job();
    const { poll } = await blockedPoll(() =>
      q.reserve({ limit: 1, leaseMs: 1_000, waitMs: 20_000 }),
    );
    await q.put([put]);
    expect((await poll).jobs[0]?.id).toBe(put.id);
  });

  it("a paused lane hands out nothing; resume wakes the waiting poll", async () => {
    const q = await fresh();
    await q.pause();
    expect(await q.isPaused()).toBe(true);
    const put = job();
    await q.put([put]);
    expect(await q.probe()).toBe(0);
    const { poll } = await blockedPoll(() =>
      q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 20_000 }),
    );
    const started = performance.now();
    await q.resume();
    expect((await poll).jobs[0]?.id).toBe(put.id);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await q.isPaused()).toBe(false);
  });

  it("a reserve that ran as an aborted poll's block ended hands its jobs back", async () => {
    const q = await fresh();
    await loadPutAndReserve(q);
    const blocked = await untilBlocked();
    const controller = new AbortController();
    const poll = q.reserve({
      limit: 10,
      leaseMs: 30_000,
      waitMs: 20_000,
      signal: controller.signal,
    });
    await blocked();
    // On the adapter's connection the put goes out before abort's CLIENT UNBLOCK: the put
    // wakes the block, and the reserve sent behind it takes the job for a poll that has
    // already ended. That reserve's reply must not strand the job under a lease.
    const put = job();
    const putting = q.put([put]);
    await putSent();
    controller.abort();
    expect((await poll).jobs).toEqual([]);
    await putting;
    const info = await waitFor(async () => {
      const got = await q.get(put.id);
      return got?.state === "waiting" && got;
    }, "the job handed back");
    expect(info.attempt).toBe(0);
    expect(info.history.map((h) => h.event)).toEqual(["published", "reserved", "released"]);
    const again = await q.reserve({ limit: 10, leaseMs: 30_000, waitMs: 0 });
    expect(again.jobs.map((j) => [j.id, j.attempt])).toEqual([[put.id, 1]]);
  });

  it("close hands back the jobs of a reserve that ran as a poll's block ended", async () => {
    const name = `q-${randomUUID().slice(0, 8)}`;
    const own = createRedisAdapter({ connection: server.url, prefix });
    const q = await own.lane(name, opts);
    await loadPutAndReserve(q);
    const blocked = await untilBlocked();
    const poll = q.reserve({ limit: 10, leaseMs: 30_000, waitMs: 20_000 });
    await blocked();
    const put = job();
    const putting = q.put([put]);
    await putSent();
    const closing = own.close();
    expect((await poll).jobs).toEqual([]);
    await putting;
    await closing;
    // close() returned after the reserve's reply came back and its job went back
    const info = await (await adapter.lane(name, opts)).get(put.id);
    expect([info?.state, info?.attempt]).toEqual(["waiting", 0]);
  });

  it("close ends pending polls with no jobs", async () => {
    const own = createRedisAdapter({ connection: server.url, prefix });
    const q = await own.lane(`q-${randomUUID().slice(0, 8)}`, opts);
    const { poll } = await blockedPoll(() =>
      q.reserve({ limit: 1, leaseMs: 1_000, waitMs: 20_000 }),
    );
    await own.close();
    expect((await poll).jobs).toEqual([]);
    await expect(q.ack([])).rejects.toBeInstanceOf(ClosedError);
  });
});

describe("across processes", () => {
  it("enforces maxConcurrency across adapters, and an ack frees a slot for a waiter", async () => {
    const name = `q-${randomUUID().slice(0, 8)}`;
    const other = createRedisAdapter({ connection: server.url, prefix });
    try {
      const a = await adapter.lane(name, { ...opts, maxConcurrency: 2 });
      const b = await other.lane(name, { ...opts, maxConcurrency: 2 });
      await a.put([job(), job(), job(), job()]);
      const first = await a.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
      expect(first.jobs).toHaveLength(2);
      expect(first.ready).toBe(0);
      expect((await b.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 })).jobs).toEqual([]);
      const { poll } = await blockedPoll(() =>
        b.reserve({ limit: 10, leaseMs: 10_000, waitMs: 20_000 }),
      );
      await a.ack([first.jobs[0]!.lock]);
      expect((await poll).jobs).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it("cancel from another process reaches the holder as an event and a status", async () => {
    const holder = createRedisAdapter({ connection: server.url, prefix });
    const events: AdapterEvent[] = [];
    try {
      const unsubscribe = await holder.subscribe((e) => events.push(e));
      const name = `q-${randomUUID().slice(0, 8)}`;
      const hq = await holder.lane(name, opts);
      const put = job();
      await hq.put([put]);
      const [held] = (await hq.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(await (await adapter.lane(name, opts)).cancel([put.id])).toEqual(["canceled"]);
      await waitFor(() => events.some((e) => e.type === "canceled" && e.jobId === put.id), "event");
      expect(events).toContainEqual({ type: "canceled", lane: name, jobId: put.id });
      expect(await hq.ack([held!.lock])).toEqual(["canceled"]);
      await unsubscribe();
    } finally {
      await holder.close();
    }
  });

  it("publishes put events when asked to", async () => {
    const own = createRedisAdapter({ connection: server.url, prefix, putEvents: true });
    const events: AdapterEvent[] = [];
    try {
      await own.subscribe((e) => events.push(e));
      const q = await own.lane(`q-${randomUUID().slice(0, 8)}`, opts);
      const put = job({ id: "custom-id" });
      await q.put([put]);
      await waitFor(() => events.length > 0, "the put event");
      expect(events).toEqual([{ type: "put", lane: q.name, jobId: "custom-id" }]);
    } finally {
      await own.close();
    }
  });
});

describe("management", () => {
  it("keeps history, stats, and lists every state through cursors", async () => {
    const q = await fresh();
    const jobs = Array.from({ length: 12 }, (_, i) => job({ priority: i % 3 === 0 ? 2 : 0 }));
    await q.put(jobs);
    const listed: string[] = [];
    for await (const info of q.list({ state: "waiting", pageSize: 5 })) listed.push(info.id);
    expect(listed.sort()).toEqual(jobs.map((j) => j.id).sort());

    const taken = (await q.reserve({ limit: 12, leaseMs: 10_000, waitMs: 0 })).jobs;
    await q.ack(taken.slice(0, 6).map((j) => j.lock));
    const error = { name: "Error", message: "boom", reason: "error" as const };
    await q.nack(taken.slice(6, 9).map((j) => ({ lock: j.lock, dead: true as const, error })));
    await q.nack(taken.slice(9).map((j) => ({ lock: j.lock, runAt: Date.now() + 60_000, error })));
    expect(await q.counts()).toEqual({
      waiting: 0,
      delayed: 3,
      active: 0,
      succeeded: 6,
      failed: 3,
      canceled: 0,
      expired: 0,
      blocked: 0,
    });
    const count = async (state: "succeeded" | "failed" | "delayed") => {
      let n = 0;
      for await (const _ of q.list({ state, pageSize: 2 })) n++;
      return n;
    };
    expect([await count("succeeded"), await count("failed"), await count("delayed")]).toEqual([
      6, 3, 3,
    ]);

    const info = await q.get(taken[0]!.id);
    expect(info?.state).toBe("succeeded");
    expect(info?.history.map((e) => e.event)).toEqual(["published", "reserved", "succeeded"]);
    const dead = await q.get(taken[6]!.id);
    expect(dead?.error).toEqual(error);
    expect(dead?.history.at(-1)).toMatchObject({ event: "failed", detail: "error" });

    const day = new Date().toISOString().slice(0, 10);
    const stats = await q.stats(day);
    expect(stats?.wait.count).toBe(12);
    expect(stats?.run.count).toBe(12);
    expect(stats?.failures).toBe(3);
    expect(stats?.retries).toBe(3);
    expect(await q.stats("1999-01-01")).toBeUndefined();

    expect(await q.retryFailed()).toBe(3);
    expect((await q.counts()).waiting).toBe(3);
    expect(await q.delete([taken[0]!.id, taken[9]!.id, taken[6]!.id, "nope"])).toBe(3);
    expect(await q.get(taken[0]!.id)).toBeUndefined();
    expect(await q.counts()).toMatchObject({ waiting: 2, delayed: 2, succeeded: 5 });
    // A deleted id may be used again.
    expect(await q.put([{ ...jobs[0]!, id: taken[0]!.id }])).toEqual([
      { id: taken[0]!.id, status: "created" },
    ]);
  });

  it("applies retention by count with bounded work", async () => {
    const q = await fresh();
    const name = q.name;
    const limited = await adapter.lane(name, {
      ...opts,
      retention: { succeeded: { maxCount: 3 } },
    });
    await limited.put(Array.from({ length: 8 }, () => job()));
    const taken = (await limited.reserve({ limit: 8, leaseMs: 10_000, waitMs: 0 })).jobs;
    await limited.ack(taken.map((j) => j.lock));
    expect((await limited.counts()).succeeded).toBe(3);
    expect(await raw.hlen(laneKeys(prefix, name).all[1]!)).toBe(3);
  });

  it("keeps at most historyLimit events per job, newest last", async () => {
    const q = await adapter.lane(`q-${randomUUID().slice(0, 8)}`, {
      maxStalls: 5,
      historyLimit: 3,
    });
    const put = job();
    await q.put([put]);
    for (let i = 0; i < 3; i++) {
      const [got] = (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
      await q.release([{ lock: got!.lock, uncounted: true }]);
    }
    const info = await q.get(put.id);
    expect(info?.history.map((e) => e.event)).toEqual(["released", "reserved", "released"]);
    expect(info?.attempt).toBe(0);
  });

  it("writes each call to the socket at once, not on a later turn of the event loop", async () => {
    // A reserve sent ahead must be on its way before the worker runs the batch it just
    // received (jobs that finish in microtasks); ioredis auto-pipelining would hold it
    // until setImmediate. Count the socket writes made before this code yields.
    const q = await fresh();
    await q.probe(); // connected, scripts loaded
    let writes = 0;
    const original = Socket.prototype.write;
    Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
      if (this.remotePort === server.port) writes++;
      return (original as (...a: unknown[]) => boolean).apply(this, args);
    } as typeof Socket.prototype.write;
    try {
      const reserved = q.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 });
      const probed = q.probe();
      expect(writes).toBe(2);
      await Promise.all([reserved, probed]);
    } finally {
      Socket.prototype.write = original;
    }
  });

  it("stores no history bytes for the common life, and writes it out before any other event", async () => {
    const q = await adapter.lane(`q-${randomUUID().slice(0, 8)}`, {
      maxStalls: 1,
      historyLimit: 2,
    });
    const jobsKey = laneKeys(prefix, q.name).all[1]!;
    const [a, b] = [job(), job()];
    await q.put([a, b]);
    const freshLength = await raw.hstrlen(jobsKey, encodeId(a.id));
    const [gotA, gotB] = (await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 })).jobs;
    await q.ack([gotA!.lock]);
    // "<state><body>" became "<55-byte header><body>": not one history entry stored.
    expect(await raw.hstrlen(jobsKey, encodeId(a.id))).toBe(freshLength - 1 + 55);
    const info = await q.get(a.id);
    // Implied entries obey the limit too (published is the one cut) and are in time order.
    expect(info?.history.map((e) => e.event)).toEqual(["reserved", "succeeded"]);
    expect(info!.history[0]!.at).toBeLessThanOrEqual(info!.history[1]!.at);
    expect(info!.history[1]!.at).toBe(info?.finishedAt);

    const wide = await adapter.lane(q.name, { maxStalls: 1, historyLimit: 10 });
    const error = { name: "Error", message: "boom", reason: "error" as const };
    await wide.nack([{ lock: gotB!.lock, runAt: Date.now(), error }]);
    const [again] = (await wide.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
    await wide.ack([again!.lock]);
    const history = (await wide.get(b.id))?.history ?? [];
    expect(history.map((e) => e.event)).toEqual([
      "published",
      "reserved",
      "retrying",
      "reserved",
      "succeeded",
    ]);
    const times = history.map((e) => e.at);
    expect(times).toEqual([...times].sort((x, y) => x - y));
  });

  it("removes finished jobs past their maximum age", async () => {
    const q = await adapter.lane(`q-${randomUUID().slice(0, 8)}`, {
      ...opts,
      retention: { succeeded: { maxAgeMs: 50 }, failed: { maxAgeMs: 60_000 } },
    });
    const [a, b] = [job(), job()];
    await q.put([a, b]);
    const got = (await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 })).jobs;
    await q.ack([got[0]!.lock]);
    const error = { name: "Error", message: "x", reason: "error" as const };
    await q.nack([{ lock: got[1]!.lock, dead: true, error }]);
    // The age sweep runs at most once a second per lane, with the next state change.
    await waitFor(async () => {
      await q.counts();
      return (await q.get(a.id)) === undefined;
    }, "the old succeeded job to go");
    expect((await q.get(b.id))?.state).toBe("failed");
  });

  it("reclaims an expired lease with history, and fences the old holder", async () => {
    const q = await fresh();
    const put = job();
    await q.put([put]);
    const [first] = (await q.reserve({ limit: 1, leaseMs: 50, waitMs: 0 })).jobs;
    const second = await waitFor(
      async () => (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs[0],
      "the re-delivery",
    );
    expect(second.attempt).toBe(2);
    expect(await q.ack([first!.lock])).toEqual(["lost"]);
    expect((await q.get(put.id))?.history.map((e) => e.event)).toEqual([
      "published",
      "reserved",
      "stalled",
      "reserved",
    ]);
  });

  it("skips canceled and deleted waiting jobs left in the list", async () => {
    const q = await fresh();
    const jobs = Array.from({ length: 6 }, () => job());
    await q.put(jobs);
    expect(await q.cancel([jobs[0]!.id, jobs[2]!.id])).toEqual(["canceled", "canceled"]);
    expect(await q.delete([jobs[3]!.id])).toBe(1);
    expect(await q.probe()).toBe(3);
    const got = await q.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
    expect(got.jobs.map((j) => j.id)).toEqual([jobs[1]!.id, jobs[4]!.id, jobs[5]!.id]);
  });
});

describe("bad input and failures", () => {
  it("hands out a job record corrupted by a foreign writer as malformed, then keeps going", async () => {
    const q = await fresh();
    const [a, b, c] = [job(), job(), job()];
    await q.put([a, b, c]);
    const jobsKey = laneKeys(prefix, q.name).all[1]!;
    await raw.hset(jobsKey, encodeId(a.id), "not a record {");
    await raw.hset(jobsKey, encodeId(b.id), Buffer.from([0xc1, 0xff, 0x00]));
    const got = (await q.reserve({ limit: 3, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(got.map((j) => j.id)).toEqual([a.id, b.id, c.id]);
    expect(got[0]?.malformed).toMatch(/undecodable/);
    expect(got[0]?.payload).toBe("not a record {");
    expect(got[1]?.malformed).toMatch(/undecodable/);
    expect(got[2]?.malformed).toBeUndefined();
    // Core dead-letters it: the nack works on the rewritten record.
    const error = { name: "MalformedJobError", message: "bad", reason: "malformed" as const };
    expect(await q.nack([{ lock: got[0]!.lock, dead: true, error }])).toEqual(["ok"]);
    expect((await q.get(a.id))?.error?.reason).toBe("malformed");
    expect(await q.ack([got[2]!.lock])).toEqual(["ok"]);
  });

  it("hands out a record whose job text was corrupted as malformed, raw text as payload", async () => {
    const q = await fresh();
    const [a, b] = [job(), job()];
    await q.put([a, b]);
    const jobsKey = laneKeys(prefix, q.name).all[1]!;
    const field = encodeId(a.id);
    // keep the record's binary prefix (state + 20 bytes) and break the text after it
    const stored = (await raw.hgetBuffer(jobsKey, field))!;
    await raw.hset(jobsKey, field, Buffer.concat([stored.subarray(0, 21), Buffer.from("x:y")]));
    expect((await q.get(a.id))?.payload).toBe("x:y");
    const got = (await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(got.map((j) => j.id)).toEqual([a.id, b.id]);
    expect(got[0]?.malformed).toMatch(/unparsable/);
    expect(got[0]?.payload).toBe("x:y");
    expect(got[1]?.malformed).toBeUndefined();
    expect(got[1]?.payload).toBe(b.payload);
    const error = { name: "MalformedJobError", message: "bad", reason: "malformed" as const };
    expect(await q.nack([{ lock: got[0]!.lock, dead: true, error }])).toEqual(["ok"]);
    expect(await q.get(a.id)).toMatchObject({ state: "failed", payload: "x:y" });
  });

  it("survives corrupted records of delayed, failed and deleted jobs", async () => {
    const q = await fresh();
    const jobsKey = laneKeys(prefix, q.name).all[1]!;
    const delayed = job({ runAt: Date.now() + 100 });
    const failing = job();
    const doomed = job();
    await q.put([delayed, failing, doomed]);
    const got = (await q.reserve({ limit: 2, leaseMs: 10_000, waitMs: 0 })).jobs;
    const error = { name: "Error", message: "x", reason: "error" as const };
    await q.nack([{ lock: got[0]!.lock, dead: true, error }]);
    await q.ack([got[1]!.lock]);
    for (const j of [delayed, failing, doomed]) await raw.hset(jobsKey, encodeId(j.id), "garbage");
    // a corrupted delayed job falls due and is handed out as malformed
    const late = await waitFor(
      async () => (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs[0],
      "the corrupted delayed job",
    );
    expect(late.id).toBe(delayed.id);
    expect(late.malformed).toBeDefined();
    // a corrupted failed job is retried (and will be handed out as malformed)
    expect(await q.retryFailed()).toBe(1);
    expect(
      (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs[0]?.malformed,
    ).toBeDefined();
    // a corrupted finished job can be deleted
    expect(await q.delete([doomed.id])).toBe(1);
    expect(await raw.hexists(jobsKey, encodeId(doomed.id))).toBe(0);
  });

  it("runs as EVAL scripts on a server without functions, as on Redis 6.2", async () => {
    // FUNCTION and FCALL renamed away: the server answers "unknown command", as 6.2 does
    const old = await startRedis([
      "--rename-command",
      "FUNCTION",
      "",
      "--rename-command",
      "FCALL",
      "",
    ]);
    const client = new Redis(old.url);
    const auto = createRedisAdapter({ connection: old.url, prefix });
    const strict = createRedisAdapter({ connection: old.url, prefix, scripting: "functions" });
    try {
      const q = await auto.lane("no-functions", opts);
      const put = job();
      expect(await q.put([put])).toEqual([{ id: put.id, status: "created" }]);
      const got = (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(got.map((j) => j.id)).toEqual([put.id]);
      expect(await q.ack([got[0]!.lock])).toEqual(["ok"]);
      const calls = await commandCalls(client);
      expect(calls.evalsha).toBeGreaterThanOrEqual(3);
      expect(calls.fcall).toBe(0);
      // no library to delete, and no error for it
      expect(await deleteStaleLibraries(client)).toEqual([]);
      // "functions" refuses to start where there are none
      await expect(strict.lane("no-functions", opts)).rejects.toThrow(LIBRARY.name);
    } finally {
      await auto.close();
      await strict.close();
      client.disconnect();
      await old.stop();
    }
  });

  it("refuses a server whose maxmemory-policy may evict jobs, unless allowed", async () => {
    const lossy = await startRedis(["--maxmemory-policy", "allkeys-lru"]);
    try {
      const strict = createRedisAdapter({ connection: lossy.url });
      await expect(strict.lane("q", opts)).rejects.toMatchObject({
        code: "CONFIG",
        field: "maxmemory-policy",
      });
      await strict.close();
      const relaxed = createRedisAdapter({ connection: lossy.url, allowEviction: true });
      await expect(relaxed.lane("q", opts)).resolves.toBeDefined();
      await relaxed.close();
    } finally {
      await lossy.stop();
    }
  });

  it.each(["functions", "eval"] as const)(
    "surfaces OOM on publish as a typed error while workers keep draining (%s)",
    async (scripting) => {
      const small = await startRedis(["--maxmemory", "3mb"]);
      const own = createRedisAdapter({ connection: small.url, scripting });
      try {
        const q = await own.lane("oom", { ...opts, retention: { succeeded: { maxCount: 0 } } });
        const big = "x".repeat(20_000);
        let refused: unknown;
        // how many fit depends on what the server holds besides (the scripts' cache, ...)
        let stored = 0;
        for (let i = 0; i < 500 && refused === undefined; i++) {
          await q.put([job({ payload: JSON.stringify(big) })]).then(
            () => stored++,
            (e: unknown) => {
              refused = e;
            },
          );
        }
        expect(refused).toBeInstanceOf(RedisOutOfMemoryError);
        expect((refused as RedisOutOfMemoryError).code).toBe("ADAPTER");
        expect(stored).toBeGreaterThanOrEqual(4);
        // nothing of the refused put was written
        expect((await q.counts()).waiting).toBe(stored);
        const r = await q.reserve({ limit: stored, leaseMs: 10_000, waitMs: 0 });
        expect(r.jobs.length).toBe(stored);
        const [a, b, c, d, ...rest] = r.jobs.map((j) => j.lock) as [Lock, Lock, Lock, Lock];
        // everything a worker does while draining: heartbeats, retries, hand-backs, acks
        expect(await q.extend([a, b], 10_000)).toEqual(["ok", "ok"]);
        const error = { name: "Error", message: "boom", reason: "error" as const };
        expect(await q.nack([{ lock: b, error, runAt: Date.now() + 60_000 }])).toEqual(["ok"]);
        expect(await q.release([{ lock: c, uncounted: true }])).toEqual(["ok"]);
        expect(await q.ack([a, d, ...rest])).toEqual(Array(stored - 2).fill("ok"));
        expect((await q.counts()).active).toBe(0);
      } finally {
        await own.close();
        await small.stop();
      }
    },
  );

  it("fails fast with a typed error while Redis is down", async () => {
    const doomed = await startRedis();
    const own = createRedisAdapter({ connection: doomed.url });
    try {
      const q = await own.lane("outage", opts);
      await doomed.kill();
      await waitFor(async () => {
        try {
          await q.put([job()]);
          return false;
        } catch (error) {
          return error instanceof RedisUnavailableError;
        }
      }, "a typed failure");
      const started = performance.now();
      await expect(q.put([job()])).rejects.toBeInstanceOf(RedisUnavailableError);
      // Fail fast, not hang: a queued command would wait for the reconnect (seconds, or
      // forever). Generous bound for a loaded CI machine; typically under 1 ms.
      expect(performance.now() - started).toBeLessThan(1_000);
      // Once a reconnect has been refused, the error says so (ioredis's own error for a
      // call it gives up on does not).
      await waitFor(async () => {
        const error = await q.put([job()]).catch((e: unknown) => e);
        return error instanceof RedisUnavailableError && /ECONNREFUSED/.test(error.message);
      }, "the refused reconnect named in the error");
    } finally {
      await own.close();
      await doomed.stop();
    }
  });

  it("names the connection error when it cannot connect at all", async () => {
    const port = await freePort();
    const own = createRedisAdapter({ connection: { host: "127.0.0.1", port } });
    try {
      const error = await own.lane("nowhere", opts).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).message).toBe(
        `[redis] connecting: Redis is unavailable (connect ECONNREFUSED 127.0.0.1:${port})`,
      );
    } finally {
      await own.close();
    }
  });

  it("never closes an injected client", async () => {
    const client = new Redis(server.port, server.host);
    const own = createRedisAdapter({ client, prefix });
    await (await own.lane("injected", opts)).put([job()]);
    await own.close();
    expect(await client.ping()).toBe("PONG");
    client.disconnect();
  });
});
