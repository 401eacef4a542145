import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Adapter,
  ConfigError,
  createTasklane,
  defineTask,
  type Tasklane,
  UnsupportedError,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

const task = defineTask({ name: "t", lane: "l", schema: z.object({}), run: () => {} });

/** The memory adapter, declaring `groups` false. */
const withoutGroups = (): Adapter =>
  bend(createMemoryAdapter(), { name: "plain", caps: { groups: false } });

describe("fair groups", () => {
  it("a lane's groups option on an adapter without capability groups is an UnsupportedError naming it", () => {
    const make = () =>
      createTasklane({
        adapter: withoutGroups(),
        lanes: [{ name: "l", groups: {} }],
        tasks: [task],
      });
    expect(make).toThrow(UnsupportedError);
    expect(make).toThrow(/lanes\[0\]\.groups/);
  });

  it("publish with group: UnsupportedError without the capability, ConfigError for a bad group", async () => {
    const tl = createTasklane({ adapter: withoutGroups(), lanes: [{ name: "l" }], tasks: [task] });
    open.push(tl);
    await expect(tl.publish(task, {}, { group: "a" })).rejects.toBeInstanceOf(UnsupportedError);
    const grouped = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "l", groups: { concurrency: 2 } }],
      tasks: [task],
    });
    open.push(grouped);
    for (const bad of ["", "x".repeat(129), 7]) {
      await expect(grouped.publish(task, {}, { group: bad as string })).rejects.toThrow(
        ConfigError,
      );
    }
    await expect(
      grouped.publishMany(task, [
        { payload: {}, group: "ok" },
        { payload: {}, group: "" },
      ]),
    ).rejects.toThrow(/items\[1\]\.group/);
    expect(await grouped.lane("l").counts()).toMatchObject({ waiting: 0 });
  });

  it("the lane option is validated: groups.concurrency a positive integer", () => {
    for (const concurrency of [0, 1.5, -1]) {
      expect(() =>
        createTasklane({
          adapter: createMemoryAdapter(),
          lanes: [{ name: "l", groups: { concurrency } }],
          tasks: [task],
        }),
      ).toThrow(/lanes\[0\]\.groups\.concurrency/);
    }
  });

  it("groups.rateLimit is validated, and refused by an adapter without groupRateLimit", () => {
    const make =
      (rateLimit: unknown, adapter: Adapter = createMemoryAdapter()) =>
      () =>
        createTasklane({
          adapter,
          lanes: [{ name: "k" }, { name: "l", groups: { rateLimit } as never }],
          tasks: [task],
        });
    expect(make({ max: 0, durationMs: 1000 })).toThrow(/lanes\[1\]\.groups\.rateLimit\.max/);
    expect(make({ max: 2, durationMs: 0 })).toThrow(/lanes\[1\]\.groups\.rateLimit\.durationMs/);
    expect(make({ max: 2, durationMs: 1000, burst: 3 })).toThrow(ConfigError);
    const noGroupWindows = bend(createMemoryAdapter(), {
      name: "windowless",
      caps: { groupRateLimit: false },
    });
    const refused = make({ max: 2, durationMs: 1000 }, noGroupWindows);
    expect(refused).toThrow(UnsupportedError);
    expect(refused).toThrow(/lanes\[1\]\.groups\.rateLimit/);
    expect(make({ max: 2, durationMs: 1000 })).not.toThrow();
  });

  it("group and groupId together are a ConfigError naming groupId, nothing written", async () => {
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "l", groups: {} }],
      tasks: [task],
    });
    open.push(tl);
    const both = { group: "a", groupId: "b" };
    await expect(tl.publish(task, {}, both)).rejects.toThrow(ConfigError);
    await expect(tl.publish(task, {}, both)).rejects.toThrow(/groupId/);
    await expect(tl.publishMany(task, [{ payload: {} }, { payload: {}, ...both }])).rejects.toThrow(
      /items\[1\]\.groupId/,
    );
    expect(await tl.lane("l").counts()).toMatchObject({ waiting: 0 });
  });
});

describe("message groups (an adapter whose backend groups messages itself, e.g. SQS)", () => {
  /** The memory adapter, declaring the backend's message groups instead of fair groups. */
  const messageGrouped = (): Adapter =>
    bend(createMemoryAdapter(), {
      name: "grouping",
      caps: { groups: false, messageGroups: true },
    });

  it("a lane with groups and no concurrency takes jobs with a group, passed to the backend", async () => {
    const tl = createTasklane({
      adapter: messageGrouped(),
      lanes: [{ name: "l", groups: {} }],
      tasks: [task],
    });
    open.push(tl);
    const { id } = await tl.publish(task, {}, { group: "acme" });
    expect(await tl.lane("l").get(id)).toMatchObject({ group: "acme" });
  });

  it("a per-group concurrency is an UnsupportedError naming lanes[i].groups.concurrency", () => {
    const make = () =>
      createTasklane({
        adapter: messageGrouped(),
        lanes: [{ name: "k" }, { name: "l", groups: { concurrency: 2 } }],
        tasks: [task],
      });
    expect(make).toThrow(UnsupportedError);
    expect(make).toThrow(/lanes\[1\]\.groups\.concurrency/);
  });

  it("a per-group rate limit is an UnsupportedError naming lanes[i].groups.rateLimit", () => {
    const make = () =>
      createTasklane({
        adapter: messageGrouped(),
        lanes: [{ name: "l", groups: { rateLimit: { max: 1, durationMs: 1000 } } }],
        tasks: [task],
      });
    expect(make).toThrow(UnsupportedError);
    expect(make).toThrow(/lanes\[0\]\.groups\.rateLimit/);
  });

  it("a job with a group on a lane without groups is still a ConfigError", async () => {
    const tl = createTasklane({ adapter: messageGrouped(), lanes: [{ name: "l" }], tasks: [task] });
    open.push(tl);
    await expect(tl.publish(task, {}, { group: "acme" })).rejects.toThrow(/has no groups option/);
  });
});
