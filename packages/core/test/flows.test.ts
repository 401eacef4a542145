import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LaneStore } from "../src/adapter.ts";
import {
  type Adapter,
  ConfigError,
  createTasklane,
  DependencyNotFoundError,
  defineTask,
  type Tasklane,
  UnsupportedError,
  ValidationError,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

const leaf = defineTask({
  name: "leaf",
  lane: "a",
  schema: z.object({ n: z.number() }),
  run: () => {},
});
const other = defineTask({ name: "other", lane: "b", schema: z.object({}), run: () => {} });
const root = defineTask({
  name: "root",
  lane: "a",
  schema: z.object({}),
  retry: { maxAttempts: 1 },
  run: async (_p, ctx) => ctx.children(),
});

/** A client on `adapter` (default memory) with lanes a and b, in namespace "ns". */
function client(adapter: Adapter = createMemoryAdapter({ clock: createManualClock(1_000_000) })) {
  const tl = createTasklane({
    adapter,
    namespace: "ns",
    lanes: [{ name: "a" }, { name: "b" }],
    tasks: [leaf, other, root],
  });
  open.push(tl);
  return tl;
}

/** Every put and putFlow the adapter gets, and the memory adapter under it. */
function recorded() {
  const inner = createMemoryAdapter({ clock: createManualClock(1_000_000) });
  const writes: unknown[] = [];
  // The memory adapter takes its own lanes only: the bent lanes' inner ones, by name.
  const stores = new Map<string, LaneStore>();
  const adapter = bend(inner, {
    lane: (store) => {
      stores.set(store.name, store);
      return {
        put: (jobs: unknown[]) => {
          writes.push(["put", jobs]);
          return store.put(jobs as never);
        },
      };
    },
    extra: {
      putFlow: (items) => {
        writes.push(["putFlow", items.map((i) => [i.lane.name, i.job])]);
        const own = items.map((i) => ({ ...i, lane: stores.get(i.lane.name) as LaneStore }));
        return inner.putFlow(own);
      },
    },
  });
  return { adapter, writes };
}

const configError = async (p: Promise<unknown>) => {
  const error = await p.catch((e) => e);
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).field;
};

describe("tl.flow", () => {
  it("puts children before their parent in one putFlow, full lane names, policies as given", async () => {
    const { adapter, writes } = recorded();
    const tl = client(adapter);
    const result = await tl.flow({
      task: root,
      payload: {},
      options: { priority: 5 },
      children: [
        { task: leaf, payload: { n: 1 }, onFailure: "ignore" },
        {
          task: root,
          payload: {},
          onFailure: "continue",
          children: [{ task: other, payload: {} }],
        },
      ],
    });
    expect(result).toMatchObject({
      status: "created",
      lane: "a",
      task: "root",
      children: [
        { lane: "a", task: "leaf", children: [] },
        { lane: "a", task: "root", children: [{ lane: "b", task: "other", children: [] }] },
      ],
    });
    expect(writes).toHaveLength(1);
    const [kind, items] = writes[0] as [string, Array<[string, Record<string, unknown>]>];
    expect(kind).toBe("putFlow");
    const [c0, c1, grand] = [
      result.children[0]?.id,
      result.children[1]?.id,
      result.children[1]?.children[0]?.id,
    ];
    expect(items.map(([lane, job]) => [lane, job.id, job.task, job.dependsOn])).toEqual([
      ["ns_a", c0, "leaf", undefined],
      ["ns_b", grand, "other", undefined],
      ["ns_a", c1, "root", [{ lane: "ns_b", id: grand, onFailure: "fail" }]],
      [
        "ns_a",
        result.id,
        "root",
        [
          { lane: "ns_a", id: c0, onFailure: "ignore" },
          { lane: "ns_a", id: c1, onFailure: "continue" },
        ],
      ],
    ]);
    expect(items[3]?.[1].priority).toBe(5);
  });

  it("a bad payload anywhere in the tree is a ValidationError and nothing is written", async () => {
    const { adapter, writes } = recorded();
    const tl = client(adapter);
    await expect(
      tl.flow({
        task: root,
        payload: {},
        children: [
          { task: root, payload: {}, children: [{ task: leaf, payload: { n: "x" } as never }] },
        ],
      }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(writes).toEqual([]);
  });

  it("refuses bad shapes with a ConfigError naming the field, writing nothing", async () => {
    const { adapter, writes } = recorded();
    const tl = client(adapter);
    expect(await configError(tl.flow({ task: root, payload: {}, children: [] }))).toBe("children");
    expect(
      await configError(
        tl.flow({
          task: root,
          payload: {},
          children: [{ task: leaf, payload: { n: 1 }, onFailure: "maybe" as never }],
        }),
      ),
    ).toBe("children[0].onFailure");
    expect(
      await configError(
        tl.flow({
          task: root,
          payload: {},
          children: [{ task: leaf, payload: { n: 1 }, options: { priority: 5000 } }],
        }),
      ),
    ).toBe("children[0].options.priority");
    expect(
      await configError(
        tl.flow({
          task: root,
          payload: {},
          children: [{ task: leaf, payload: { n: 1 }, options: { debounce: { key: "k", ms: 5 } } }],
        }),
      ),
    ).toBe("children[0].options.debounce");
    expect(writes).toEqual([]);
  });

  it("refuses what is not a tree, naming the node, and a tree past the bounds", async () => {
    const { adapter, writes } = recorded();
    const tl = client(adapter);
    const refused = async (flow: unknown) => {
      const error = await tl.flow(flow as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      const { field, value, message } = error as ConfigError;
      return { field, value, message: message.slice(message.indexOf(": ") + 2) };
    };
    for (const flow of [null, "root"]) {
      expect(await refused(flow)).toEqual({
        field: "flow",
        value: flow,
        message: "must be an object { task, payload, children }",
      });
    }
    const child = { task: leaf, payload: { n: 1 } };
    expect(await refused({ task: root, payload: {}, children: [child, null] })).toMatchObject({
      field: "children[1]",
      value: null,
      message: "must be an object { task, payload, options?, children? }",
    });
    expect(
      await refused({ task: root, payload: {}, children: [{ ...child, options: 7 }] }),
    ).toMatchObject({ field: "children[0].options", value: 7, message: "must be an object" });
    expect(
      await refused({ task: root, payload: {}, children: [{ ...child, children: "x" }] }),
    ).toMatchObject({ field: "children[0].children", value: "x", message: "must be an array" });
    // A job waits for at most 1,000 jobs, its children and dependsOn together.
    const many = Array.from({ length: 1_001 }, (_, i) => ({ task: leaf, payload: { n: i } }));
    expect(await refused({ task: root, payload: {}, children: many })).toEqual({
      field: "children",
      value: 1_001,
      message: "a job waits for at most 1000 jobs (children and dependsOn)",
    });
    expect(writes).toEqual([]);
    const full = await tl.flow({ task: root, payload: {}, children: many.slice(0, 1_000) });
    expect(full.children).toHaveLength(1_000);
  });

  it("a flow holds at most the adapter's maxBatch jobs, the parent counted", async () => {
    const { adapter, writes } = recorded();
    const putFlow = adapter.putFlow as NonNullable<Adapter["putFlow"]>;
    const tl = client(bend(adapter, { caps: { maxBatch: 3 }, extra: { putFlow } }));
    const children = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ task: leaf, payload: { n: i } }));
    const error = await tl
      .flow({ task: root, payload: {}, children: children(3) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect([(error as ConfigError).field, (error as ConfigError).value]).toEqual(["children", 4]);
    expect((error as ConfigError).message).toMatch(/a flow holds at most 3 jobs$/);
    expect(writes).toEqual([]);
    expect((await tl.flow({ task: root, payload: {}, children: children(2) })).status).toBe(
      "created",
    );
  });

  it("a duplicate jobId answers duplicate with the tree's ids; nothing more is written", async () => {
    const tl = client();
    await tl.publish(leaf, { n: 1 }, { jobId: "taken" });
    const result = await tl.flow({
      task: root,
      payload: {},
      children: [{ task: leaf, payload: { n: 2 }, options: { jobId: "taken" } }],
    });
    expect(result.status).toBe("duplicate");
    expect(result.children[0]?.id).toBe("taken");
    expect(await tl.lane("a").counts()).toMatchObject({ waiting: 1, blocked: 0 });
  });

  it("on an adapter without capability flows: UnsupportedError, nothing written", async () => {
    const { adapter, writes } = recorded();
    // Without the capability, and declaring it without the method.
    for (const bent of [
      bend(adapter, { name: "plain", caps: { flows: false } }),
      bend(createMemoryAdapter(), { name: "plain", caps: { flows: true } }),
    ]) {
      const tl = client(bent);
      const flow = tl
        .flow({ task: root, payload: {}, children: [{ task: leaf, payload: { n: 1 } }] })
        .catch((e: unknown) => e);
      expect(await flow).toBeInstanceOf(UnsupportedError);
      expect(((await flow) as UnsupportedError).message).toBe(
        "The plain adapter does not support flows (capability flows)",
      );
      await expect(tl.publish(leaf, { n: 1 }, { dependsOn: ["x"] })).rejects.toBeInstanceOf(
        UnsupportedError,
      );
      expect(await tl.lane("a").counts()).toMatchObject({ waiting: 0, blocked: 0 });
    }
    expect(writes).toEqual([]);
  });
});

describe("publish with dependsOn", () => {
  it("goes through putFlow: ids of the job's lane, or { jobId, lane, onFailure } of another", async () => {
    const { adapter, writes } = recorded();
    const tl = client(adapter);
    const first = await tl.publish(leaf, { n: 1 });
    const second = await tl.publish(other, {});
    const r = await tl.publish(
      root,
      {},
      {
        dependsOn: [first.id, { jobId: second.id, lane: "b", onFailure: "ignore" }],
      },
    );
    expect(r.status).toBe("created");
    expect(writes.at(-1)).toEqual([
      "putFlow",
      [
        [
          "ns_a",
          expect.objectContaining({
            id: r.id,
            dependsOn: [
              { lane: "ns_a", id: first.id, onFailure: "fail" },
              { lane: "ns_b", id: second.id, onFailure: "ignore" },
            ],
          }),
        ],
      ],
    ]);
    expect((await tl.lane("a").get(r.id))?.state).toBe("blocked");
    // getJob and the lane's get show the dependencies' and dependents' lanes by config name
    expect((await tl.getJob(r.id))?.dependencies?.map((d) => d.lane)).toEqual(["a", "b"]);
    expect((await tl.lane("a").get(r.id))?.dependencies?.map((d) => d.lane)).toEqual(["a", "b"]);
    expect((await tl.lane("b").get(second.id))?.dependents).toEqual([{ lane: "a", jobId: r.id }]);
  });

  it("an id no lane holds is DependencyNotFoundError naming it and its lane; nothing written", async () => {
    const tl = client();
    const error = await tl
      .publish(root, {}, { dependsOn: [{ jobId: "ghost", lane: "b" }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(DependencyNotFoundError);
    expect(error).toMatchObject({ code: "DEPENDENCY_NOT_FOUND", jobId: "ghost", lane: "b" });
    expect(await tl.lane("a").counts()).toMatchObject({ waiting: 0, blocked: 0 });
  });

  it("refuses bad values with a ConfigError naming the field", async () => {
    const tl = client();
    const cases: Array<[unknown, string]> = [
      ["x", "options.dependsOn"],
      [[], "options.dependsOn"],
      [[""], "options.dependsOn[0]"],
      [[{ jobId: "x", lane: "nope" }], "options.dependsOn[0].lane"],
      [[{ jobId: "x", onFailure: "sometimes" }], "options.dependsOn[0].onFailure"],
      [[{ jobId: "x", when: 1 }], "options.dependsOn[0].when"],
      [[{ lane: "a" }], "options.dependsOn[0].jobId"],
      [["x", "x"], "options.dependsOn[1]"],
    ];
    for (const [value, field] of cases) {
      expect(
        await configError(tl.publish(leaf, { n: 1 }, { dependsOn: value as never })),
        JSON.stringify(value),
      ).toBe(field);
    }
    expect(
      await configError(
        tl.publish(leaf, { n: 1 }, { dependsOn: ["x"], debounce: { key: "k", ms: 5 } }),
      ),
    ).toBe("options.debounce");
    expect(await configError(tl.publishMany(leaf, [{ payload: { n: 1 }, dependsOn: ["x"] }]))).toBe(
      "items[0].dependsOn",
    );
  });
});

describe("ctx.children()", () => {
  it("is UnsupportedError on an adapter without capability flows", async () => {
    const inner = createMemoryAdapter();
    const failures: unknown[] = [];
    const tl = client(bend(inner, { name: "plain", caps: { flows: false } }));
    tl.events.on("failed", (e) => failures.push(e.error));
    await tl.publish(root, {});
    const worker = tl.worker({ lanes: ["a"] });
    await worker.start();
    await expect.poll(() => failures.length, { timeout: 5_000 }).toBe(1);
    await worker.stop();
    expect(failures[0]).toMatchObject({ name: "UnsupportedError", reason: "error" });
  });
});
