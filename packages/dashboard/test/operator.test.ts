/**
 * The dashboard on the operator data model, in a real chromium, over the memory adapter
 * (which has every operator capability) served by the management handler: a job's result,
 * progress, logs, tags and expiry; job lists filtered by the API and paged with its
 * cursor; the expired tab; failure groups from the API, retried and deleted; the workers
 * registry; schedules listed, paused, resumed and removed; promote, priority and move,
 * from a job's page and from a list. Redis, whose
 * adapter declares these capabilities false for now, keeps the browser-side fallbacks
 * (redis.test.ts).
 */
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask, type Tasklane, type Worker } from "@tasklane/core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  launchBrowser,
  screenshot,
  serveDashboard,
  type TestBrowser,
  type TestServer,
  waitFor,
  waitForText,
} from "./helpers.ts";

/** Handlers wait on these until the test lets them go on. */
const gates = new Map<string, () => void>();
const gate = (key: string) => new Promise<void>((resolve) => gates.set(key, resolve));
/** Jobs of `charge` whose card is here succeed (the card was fixed). */
const healed = new Set<string>();

const resize = defineTask({
  name: "resize",
  lane: "default",
  schema: z.object({ width: z.number(), hold: z.string().optional() }),
  result: z.object({ url: z.string(), bytes: z.number() }),
  async run({ width, hold }, ctx) {
    ctx.log(`fetching the original for ${width} px`);
    ctx.progress({ done: 1, total: 2 });
    if (hold !== undefined) await gate(hold);
    ctx.log("encoding as PNG");
    ctx.progress({ done: 2, total: 2 });
    return { url: `https://cdn.example.com/${width}.png`, bytes: width * 57 };
  },
});

const charge = defineTask({
  name: "charge",
  lane: "default",
  schema: z.object({ card: z.string(), kind: z.enum(["TypeError", "RangeError"]) }),
  retry: { maxAttempts: 1 },
  run({ card, kind }) {
    if (healed.has(card)) return;
    throw kind === "TypeError"
      ? new TypeError(`card ${card} is not a number`)
      : new RangeError(`amount for ${card} out of range`);
  },
});

const note = defineTask({
  name: "note",
  lane: "low",
  schema: z.object({ n: z.number() }),
  run() {},
});

const tenantJob = defineTask({
  name: "tenant-job",
  lane: "tenants",
  schema: z.object({ n: z.number() }),
  run() {},
});

const hold = defineTask({
  name: "hold",
  lane: "high",
  schema: z.object({ key: z.string() }),
  run: ({ key }) => gate(key),
});

let tl: Tasklane;
let srv: TestServer;
let worker: Worker;
let chrome: TestBrowser & { errors: string[] };
/** Every API request the pages made that answered 501 (none should). */
const answered501: string[] = [];

beforeAll(async () => {
  tl = createTasklane({
    adapter: createMemoryAdapter(),
    // "low", "spare" and "tenants" have no worker: their jobs stay where the tests put them.
    lanes: [
      { name: "high", priority: 100 },
      { name: "default", priority: 40 },
      { name: "low", priority: 5 },
      { name: "spare", priority: 1 },
      {
        name: "tenants",
        priority: 1,
        rateLimit: { max: 5, durationMs: 1_000 },
        groups: { rateLimit: { max: 2, durationMs: 60_000 } },
      },
    ],
    tasks: [resize, charge, note, hold, tenantJob],
  });
  worker = tl.worker({ concurrency: 8, lanes: ["high", "default"], heartbeatMs: 100 });
  await worker.start();
  srv = await serveDashboard(tl, { allowAnonymousWrites: true });
  chrome = await launchBrowser();
});

afterAll(async () => {
  for (const release of gates.values()) release();
  await chrome?.close();
  await srv?.close();
  await tl?.close();
});

async function open(hash: string): Promise<Page> {
  const page = await chrome.page();
  page.on("response", (r) => {
    if (r.status() === 501) answered501.push(`${r.request().method()} ${r.url()}`);
  });
  await page.goto(`${srv.ui}${hash}`);
  return page;
}

describe("a job's page", () => {
  it("shows progress as a bar and the logs while it runs, then its result; tags and expiry", async () => {
    const { id } = await tl.publish(
      resize,
      { width: 640, hold: "resize-640" },
      { tags: ["customer:42", "batch:7"], expiresInMs: 3_600_000 },
    );
    await waitFor(() => gates.has("resize-640"), "the job to start");
    const page = await open(`#/job/default/${id}`);
    const progress = page.getByRole("region", { name: "Progress" });
    // Reports are sent once a second at most: the first one comes while it runs.
    await waitForText(progress, (t) => t.includes("1 of 2 (50%)"), "half-way progress");
    expect(
      await progress.getByRole("progressbar", { name: "Progress: 1 of 2 (50%)" }).count(),
    ).toBe(1);
    const logs = page.getByRole("table", { name: "Log lines" });
    await waitForText(logs, (t) => t.includes("fetching the original for 640 px"), "a log line");
    const facts = page.locator("dl.facts");
    expect(await facts.textContent()).toContain("customer:42");
    // It started in time: its expiry no longer applies.
    expect(await facts.textContent()).toContain("Expirystarted in time");
    // The tag links to the lane's jobs with it (the API filters them).
    expect(await page.getByRole("link", { name: "batch:7" }).getAttribute("href")).toBe(
      "#/lanes/default/jobs/active?tag=batch%3A7",
    );
    gates.get("resize-640")?.();
    const result = page.getByRole("region", { name: "Result" });
    await waitForText(result, (t) => t.includes("36480"), "the result");
    expect(JSON.parse((await result.locator("pre").textContent()) ?? "")).toEqual({
      url: "https://cdn.example.com/640.png",
      bytes: 36_480,
    });
    await waitForText(progress, (t) => t.includes("2 of 2 (100%)"), "the last progress");
    await waitForText(logs, (t) => t.includes("encoding as PNG"), "the last log line");
    expect(await logs.getByRole("row").count()).toBe(3);
    await screenshot(page, "operator-job");
  });
});

describe("a lane's rate limit and fair groups", () => {
  it("show on the lane's page, and a job's group on its page", async () => {
    const { id } = await tl.publish(tenantJob, { n: 1 }, { group: "acme" });
    const lanePage = await open("#/lanes/tenants");
    await waitForText(
      lanePage.locator(".config-line"),
      (t) =>
        t.includes(
          "at most 5 started per 1.00 s · fair groups, at most 2 started per 1.0 min each",
        ),
      "the lane's limits",
    );
    const page = await open(`#/job/tenants/${id}`);
    await waitForText(page.locator("dl.facts"), (t) => t.includes("Groupacme"), "the group");
  });
});

describe("job lists", () => {
  it("page through the API's cursor, filter by tag and task there, and show expired jobs", async () => {
    const notes = await tl.publishMany(
      note,
      Array.from({ length: 60 }, (_, n) => ({
        payload: { n },
        ...(n % 3 === 0 ? { tags: ["vip"] } : {}),
      })),
    );
    const requests: string[] = [];
    const page = await open("#/lanes/low/jobs/waiting");
    page.on("request", (r) => {
      if (r.url().includes("/jobs?")) requests.push(decodeURIComponent(r.url()));
    });
    const table = page.getByRole("table", { name: "waiting jobs in low" });
    await waitForText(table, (t) => t.includes(notes[0]?.id.slice(0, 8) ?? "?"), "page 1");
    expect(await table.locator("tbody tr").count()).toBe(25);
    await page.getByRole("button", { name: "Next ›" }).click();
    await waitForText(table, (t) => t.includes(notes[25]?.id.slice(0, 8) ?? "?"), "page 2");
    await page.getByRole("button", { name: "Next ›" }).click();
    await waitForText(table, (t) => t.includes(notes[50]?.id.slice(0, 8) ?? "?"), "page 3");
    expect(await table.locator("tbody tr").count()).toBe(10);
    expect(await page.getByRole("button", { name: "Next ›" }).isDisabled()).toBe(true);
    // Pages after the first start at the API's cursor, not at an offset into the lane.
    const later = requests.filter((u) => u.includes("cursor="));
    expect(later.length).toBeGreaterThan(0);
    expect(requests.every((u) => u.includes("offset=0") && u.includes("fields=summary"))).toBe(
      true,
    );
    await page.getByRole("button", { name: "‹ Previous" }).click();
    await waitForText(table, (t) => t.includes(notes[25]?.id.slice(0, 8) ?? "?"), "back to 2");

    requests.length = 0;
    await page.getByPlaceholder("Tag").fill("vip");
    await page.getByRole("button", { name: "Search" }).click();
    await waitFor(async () => (await table.locator("tbody tr").count()) === 20, "20 vip notes");
    expect(requests.some((u) => u.includes("tag=vip"))).toBe(true);
    expect(await table.textContent()).toContain("vip");
    expect(page.url()).toContain("tag=vip");
    await page.getByText("filtered by the memory adapter").waitFor();
    await screenshot(page, "operator-list-tag");
    await page.getByRole("button", { name: "Clear" }).click();
    await waitFor(async () => (await table.locator("tbody tr").count()) === 25, "all again");
    requests.length = 0;
    await page.getByRole("combobox", { name: "Task" }).selectOption("charge");
    await page.getByText("No waiting job matches task charge.").waitFor();
    expect(requests.some((u) => u.includes("task=charge"))).toBe(true);
    await page.getByRole("combobox", { name: "Task" }).selectOption("note");
    await waitFor(async () => (await table.locator("tbody tr").count()) === 25, "the notes");

    // A job not started in time: the expired tab lists it.
    const { id: gone } = await tl.publish(note, { n: 999 }, { expiresInMs: 20 });
    await waitFor(
      async () => ((await tl.lane("low").counts()).expired ?? 0) >= 1,
      "the job to expire",
    );
    await page.getByRole("link", { name: /^expired/ }).click();
    const expired = page.getByRole("table", { name: "expired jobs in low" });
    await waitForText(expired, (t) => t.includes(gone.slice(0, 8)), "the expired job");
    expect(await page.getByRole("columnheader", { name: "Expired" }).count()).toBe(1);
    await expired.getByRole("link", { name: `Job ${gone}` }).click();
    const facts = page.locator("dl.facts");
    await waitForText(facts, (t) => /Expired\d+ s ago/.test(t), "when it expired");

    // A job waiting for another (capability flows): the blocked tab lists it, and it can be
    // canceled from its page.
    const dependency = notes[0]?.id ?? "";
    const { id: blocked } = await tl.publish(note, { n: 1000 }, { dependsOn: [dependency] });
    await page.goto(`${srv.ui}#/lanes/low/jobs/blocked`);
    const blockedTable = page.getByRole("table", { name: "blocked jobs in low" });
    await waitForText(blockedTable, (t) => t.includes(blocked.slice(0, 8)), "the blocked job");
    await blockedTable.getByRole("link", { name: `Job ${blocked}` }).click();
    // Its page shows what it waits for (not ended yet), linked to that job's page.
    const waitsFor = page.getByRole("table", { name: "Waits for" });
    await waitForText(
      waitsFor,
      (t) => t.includes(`${dependency.slice(0, 8)}notelowfailnot yet`),
      "the dependency",
    );
    await screenshot(page, "operator-blocked-job");
    // exact: the list page's "Cancel selected" and "Cancel all blocked…" may still be up
    // while the job page loads.
    const cancel = page.getByRole("button", { name: "Cancel", exact: true });
    await cancel.click();
    await waitFor(
      async () => (await tl.lane("low").get(blocked))?.state === "canceled",
      "the blocked job canceled",
    );
    // The dependency's page names the job that waited for it, linked back.
    await waitsFor.getByRole("link", { name: `Job ${dependency}` }).click();
    await page
      .getByText("Waited for by")
      .getByRole("link", { name: `Job ${blocked}` })
      .waitFor();
  });
});

describe("failure groups", () => {
  it("come from the API; a group is retried, another deleted", async () => {
    const ids = await tl.publishMany(charge, [
      { payload: { card: "4000-1", kind: "TypeError" } },
      { payload: { card: "4000-2", kind: "RangeError" } },
      { payload: { card: "4000-3", kind: "TypeError" } },
    ]);
    await waitFor(async () => (await tl.lane("default").counts()).failed >= 3, "3 failures");
    const requests: string[] = [];
    const page = await open("#/failures");
    page.on("request", (r) => requests.push(new URL(r.url()).pathname));
    const groups = page.getByRole("table", { name: "Failure groups" });
    const typeErrors = groups.getByRole("row").filter({ hasText: "TypeError" });
    await waitForText(
      typeErrors,
      (t) => /TypeError: card 4000-[13] is not a number/.test(t),
      "group",
    );
    expect(await typeErrors.getByRole("cell").nth(2).textContent()).toBe("2");
    expect(await groups.getByRole("row").filter({ hasText: "RangeError" }).count()).toBe(1);
    await screenshot(page, "operator-failures");
    // Show: the group's jobs, filtered by the API.
    expect(await typeErrors.getByRole("link", { name: "Show" }).getAttribute("href")).toBe(
      "#/lanes/default/jobs/failed?errorName=TypeError",
    );

    healed.add("4000-1");
    healed.add("4000-3");
    await typeErrors.getByRole("button", { name: /^Retry the 2 TypeError jobs/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Retry" }).click();
    await waitFor(
      async () =>
        (await tl.lane("default").get(ids[0]?.id as string))?.state === "succeeded" &&
        (await tl.lane("default").get(ids[2]?.id as string))?.state === "succeeded",
      "the retried group to run again and succeed",
    );
    await typeErrors.waitFor({ state: "detached" });

    const ranges = groups.getByRole("row").filter({ hasText: "RangeError" });
    await ranges.getByRole("button", { name: /^Delete the 1 RangeError jobs/ }).click();
    const dialog = page.getByRole("dialog");
    // Destructive: the focus starts on Cancel.
    await waitFor(
      async () => (await page.locator(":focus").textContent()) === "Cancel",
      "the focus on Cancel",
    );
    await dialog.getByRole("button", { name: "Delete" }).click();
    await waitFor(
      async () => (await tl.lane("default").get(ids[1]?.id as string)) === undefined,
      "the group deleted",
    );
    await page.getByText("No failed jobs.").waitFor();
    // Grouped by the API: the page did not read the failed jobs to group them.
    expect(requests.some((p) => p.endsWith("/lanes/default/jobs"))).toBe(false);
    expect(requests).toContain("/ops/failure-groups");
  });
});

describe("workers", () => {
  it("lists the running workers from the registry, with what they hold", async () => {
    const { id } = await tl.publish(hold, { key: "held" });
    await waitFor(() => gates.has("held"), "the job to start");
    const page = await open("#/workers");
    const table = page.getByRole("table", { name: "Workers" });
    const row = table.getByRole("row").filter({ hasText: "high, default" });
    await waitForText(row, (t) => t.includes(id.slice(0, 8)), "the held job in the row");
    const cells = await row.getByRole("cell").allTextContents();
    // host, pid, lanes, concurrency, held, running, started, heartbeat, lapses, jobs
    expect(cells[1]).toBe(String(process.pid));
    expect(cells[2]).toBe("high, default");
    expect(cells.slice(3, 6)).toEqual(["8", "1", "1"]);
    expect(cells[7]).toMatch(/^(now|\d+ s ago)$/);
    expect(cells[8]).toMatch(/^in [\d.]+ ms$/);
    await screenshot(page, "operator-workers");
    gates.get("held")?.();
    await waitForText(row, (t) => !t.includes(id.slice(0, 8)), "the job gone from the row");
  });
});

describe("schedules", () => {
  it("lists them with their next run; pause, resume and remove from the page", async () => {
    // In "low", which no worker serves: nothing fires them, so runs and slots stay put.
    const nightly = await tl.schedules.upsert(
      "nightly",
      { cron: "0 3 * * *", timezone: "Europe/Paris" },
      note,
      { n: 1 },
    );
    const hourly = await tl.schedules.upsert("hourly", { everyMs: 3_600_000 }, note, { n: 2 });
    expect(nightly.nextAt).not.toBeNull();
    expect(hourly.nextAt).not.toBeNull();
    const page = await open("#/schedules");
    const table = page.getByRole("table", { name: "Schedules" });
    const rowOf = (id: string) =>
      table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: id }) });
    const nextOf = (id: string) => rowOf(id).getByRole("cell").nth(4).locator("time");
    await rowOf("nightly").waitFor();
    // lane, task, cron or interval, time zone, next run, last slot, runs, state
    const cells = async (id: string) =>
      (await rowOf(id).getByRole("cell").allTextContents()).slice(0, 8);
    expect((await cells("nightly")).slice(0, 4)).toEqual([
      "low",
      "note",
      "0 3 * * *",
      "Europe/Paris",
    ]);
    expect((await cells("nightly")).slice(5)).toEqual(["none yet", "0", "active"]);
    expect((await cells("hourly")).slice(0, 4)).toEqual(["low", "note", "every 1 h", "–"]);
    // The next run as the exact instant the API gave, whatever the browser's time zone.
    expect(await nextOf("nightly").getAttribute("datetime")).toBe(
      new Date(nightly.nextAt as number).toISOString(),
    );
    expect(await nextOf("hourly").getAttribute("datetime")).toBe(
      new Date(hourly.nextAt as number).toISOString(),
    );
    expect(await page.getByText("2 schedules, 0 paused").count()).toBe(1);
    await screenshot(page, "operator-schedules");

    await page.getByRole("button", { name: "Pause schedule nightly" }).click();
    await waitFor(async () => (await tl.schedules.get("nightly"))?.paused === true, "paused");
    await waitForText(
      rowOf("nightly").getByRole("cell").nth(7),
      (t) => t === "paused",
      "the row marked paused",
    );
    expect(await rowOf("nightly").getByRole("cell").nth(4).textContent()).toBe("paused");
    expect((await tl.schedules.get("hourly"))?.paused).toBe(false);

    await page.getByRole("button", { name: "Resume schedule nightly" }).click();
    const resumed = await waitFor(async () => {
      const s = await tl.schedules.get("nightly");
      return s?.paused === false ? s : undefined;
    }, "resumed");
    await waitForText(
      rowOf("nightly").getByRole("cell").nth(7),
      (t) => t === "active",
      "the row active again",
    );
    expect(await nextOf("nightly").getAttribute("datetime")).toBe(
      new Date(resumed.nextAt as number).toISOString(),
    );

    await page.getByRole("button", { name: "Remove schedule hourly" }).click();
    const dialog = page.getByRole("dialog");
    // Destructive: the focus starts on Cancel.
    await waitFor(
      async () => (await page.locator(":focus").textContent()) === "Cancel",
      "the focus on Cancel",
    );
    await dialog.getByRole("button", { name: "Remove" }).click();
    await waitFor(async () => (await tl.schedules.get("hourly")) === undefined, "hourly removed");
    await waitFor(async () => (await rowOf("hourly").count()) === 0, "its row gone");
    expect((await tl.schedules.list()).map((s) => s.id)).toEqual(["nightly"]);
    expect(await rowOf("nightly").count()).toBe(1);
    await tl.schedules.remove("nightly");
  });

  it("offers no pause or remove to a read-only caller, and says why", async () => {
    await tl.schedules.upsert("weekly", { cron: "0 6 * * 1" }, note, { n: 3 });
    // The same client behind a second handler whose every caller may only read.
    const reader = await serveDashboard(tl, { authorize: () => "read" });
    const page = await chrome.page();
    try {
      await page.goto(`${reader.ui}#/schedules`);
      const row = page
        .getByRole("row")
        .filter({ has: page.getByRole("rowheader", { name: "weekly" }) });
      await row.waitFor();
      // A cron without a zone is read in UTC.
      expect(await row.getByRole("cell").nth(3).textContent()).toBe("UTC");
      for (const name of ["Pause schedule weekly", "Remove schedule weekly"]) {
        const button = page.getByRole("button", { name });
        expect(await button.isDisabled()).toBe(true);
        expect(await button.getAttribute("title")).toBe("Your access is read-only.");
      }
      await page.getByText("Your access is read-only.", { exact: true }).first().waitFor();
      expect((await tl.schedules.get("weekly"))?.paused).toBe(false);
    } finally {
      // The page first: its event stream would log the server going away as an error.
      await page.close();
      await reader.close();
      await tl.schedules.remove("weekly");
    }
  });
});

describe("promote, priority and move", () => {
  it("from a job's page: run now, set its priority, move it to another lane", async () => {
    const { id } = await tl.publish(note, { n: 1 }, { delayMs: 3_600_000 });
    const page = await open(`#/job/low/${id}`);
    await page.getByRole("heading", { name: id }).waitFor();
    await page.getByRole("button", { name: "Run now" }).click();
    await waitFor(async () => (await tl.lane("low").get(id))?.state === "waiting", "promoted");
    await page.locator(".badge.state-waiting").first().waitFor();
    await page.getByLabel("Priority").fill("42");
    await page.getByRole("button", { name: "Set" }).click();
    await waitFor(async () => (await tl.lane("low").get(id))?.priority === 42, "priority 42");
    await page.getByLabel("Move to").selectOption("spare");
    await page.getByRole("button", { name: "Move", exact: true }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Move" }).click();
    await waitFor(async () => (await tl.lane("spare").get(id)) !== undefined, "moved to spare");
    expect(await tl.lane("low").get(id)).toBeUndefined();
    // The page follows the job to its new lane.
    await waitFor(() => page.url().endsWith(`#/job/spare/${id}`), "the job's new page");
    expect((await tl.lane("spare").get(id))?.history.map((h) => h.event)).toEqual([
      "published",
      "promoted",
      "prioritized",
      "moved",
    ]);
  });

  it("from a list: promote, re-prioritise and move selected jobs", async () => {
    const delayed = await tl.publishMany(
      note,
      Array.from({ length: 3 }, (_, n) => ({ payload: { n }, delayMs: 3_600_000 })),
    );
    const [a, b, c] = delayed.map((r) => r.id);
    const page = await open("#/lanes/low/jobs/delayed");
    const table = page.getByRole("table", { name: "delayed jobs in low" });
    await waitForText(table, (t) => t.includes((c as string).slice(0, 8)), "the delayed jobs");
    await page.getByRole("checkbox", { name: `Select job ${a}` }).check();
    await page.getByRole("button", { name: "Promote selected" }).click();
    await waitFor(async () => (await tl.lane("low").get(a as string))?.state === "waiting", "a");
    await page.getByRole("checkbox", { name: `Select job ${b}` }).check();
    await page.getByRole("spinbutton", { name: "Priority" }).fill("-3");
    await page.getByRole("button", { name: "Set for selected" }).click();
    await waitFor(async () => (await tl.lane("low").get(b as string))?.priority === -3, "b");
    await page.getByRole("checkbox", { name: `Select job ${c}` }).check();
    await page.getByRole("combobox", { name: "Move to" }).selectOption("spare");
    await page.getByRole("button", { name: "Move selected" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Move" }).click();
    await waitFor(async () => (await tl.lane("spare").get(c as string)) !== undefined, "c moved");
    expect((await tl.lane("low").get(b as string))?.state).toBe("delayed");
  });

  it("asked nothing that answered 501, and logged no errors", () => {
    expect(answered501).toEqual([]);
    expect(chrome.errors).toEqual([]);
  });
});
