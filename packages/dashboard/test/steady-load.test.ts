/**
 * The dashboard under a steady load (memory adapter, three lanes, jobs arriving for about
 * twenty seconds, some failing in different ways): the page updates continuously without
 * anything moving, and these are the screenshots the README shows (test-results/, picked
 * by hand into docs/images/).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask, type Tasklane, UnrecoverableError } from "@tasklane/core";
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

const payload = z.object({ to: z.string(), workMs: z.number(), fail: z.string().optional() });
const run = async (p: z.infer<typeof payload>, ctx: { signal: AbortSignal; attempt: number }) => {
  await sleep(p.workMs, undefined, { signal: ctx.signal });
  if (p.fail === "timeout") throw new Error(`upstream smtp.example.com timed out after 30 s`);
  if (p.fail === "bounce") throw new UnrecoverableError(`mailbox ${p.to} does not exist`);
  if (p.fail === "flaky" && ctx.attempt === 1) throw new Error("connection reset by peer");
};
const tasks = [
  defineTask({
    name: "send-email",
    lane: "default",
    schema: payload,
    retry: { maxAttempts: 2, baseMs: 100 },
    run,
  }),
  defineTask({
    name: "notify",
    lane: "high",
    schema: payload,
    retry: { maxAttempts: 2, baseMs: 100 },
    run,
  }),
  defineTask({
    name: "build-report",
    lane: "low",
    schema: payload,
    retry: { maxAttempts: 2, baseMs: 100 },
    run,
  }),
];

let tl: Tasklane;
let srv: TestServer;
let chrome: TestBrowser & { errors: string[] };

beforeAll(async () => {
  tl = createTasklane({
    adapter: createMemoryAdapter(),
    lanes: [
      { name: "high", priority: 100 },
      { name: "default", priority: 40 },
      { name: "low", priority: 5, maxConcurrency: 3 },
    ],
    tasks,
  });
  await tl.worker({ concurrency: 16 }).start();
  srv = await serveDashboard(tl, { allowAnonymousWrites: true });
  chrome = await launchBrowser();
});

afterAll(async () => {
  await chrome?.close();
  await srv?.close();
  await tl?.close();
});

/** Publish about 40 jobs a second for `seconds`, a few of them failing. */
async function load(seconds: number, stop: { now: boolean }): Promise<number> {
  let n = 0;
  const end = Date.now() + seconds * 1_000;
  while (Date.now() < end && !stop.now) {
    for (const task of tasks) {
      const r = (n * 7919) % 100;
      const fail = r < 4 ? "timeout" : r < 6 ? "bounce" : r < 12 ? "flaky" : undefined;
      const slow = task.name === "build-report";
      await tl.publish(
        task,
        {
          to: `user${n}@example.com`,
          workMs: slow ? 60 + (n % 5) * 60 : 3 + (n % 9) * 4,
          ...(fail ? { fail } : {}),
        },
        n % 25 === 0 ? { delayMs: 60_000 } : {},
      );
      n++;
    }
    await sleep(75);
  }
  return n;
}

describe("under a steady load", () => {
  it("updates the lanes page continuously without moving anything", async () => {
    const page = await chrome.page();
    await page.goto(srv.ui);
    const table = page.getByRole("table", { name: "Lanes" });
    await table.waitFor();
    await page.locator(".live-live").waitFor();
    const stop = { now: false };
    const publishing = load(30, stop);
    try {
      // Sample where things are while counts, the chart and the times change under them.
      const boxes = new Set<string>();
      const chartBoxes = new Set<string>();
      const chart = page.locator(".chart[aria-label^='Events per second']");
      const changes = new Set<string>();
      const deadline = Date.now() + 8_000;
      while (Date.now() < deadline) {
        boxes.add(JSON.stringify(await table.boundingBox()));
        chartBoxes.add(JSON.stringify(await chart.boundingBox()));
        changes.add((await table.textContent()) ?? "");
        await sleep(250);
      }
      expect(changes.size).toBeGreaterThan(5);
      expect([...boxes]).toHaveLength(1);
      expect([...chartBoxes]).toHaveLength(1);
      await waitFor(
        async () => {
          const followed = /\((\d+) s followed\)/.exec(
            (await chart.getAttribute("aria-label")) ?? "",
          );
          return Number(followed?.[1]) >= 20;
        },
        "twenty seconds of events",
        30_000,
      );
      await screenshot(page, "steady-lanes");
      const dark = await chrome.page({ colorScheme: "dark" });
      await dark.goto(`${srv.ui}#/lanes/low`);
      await dark.locator(".chart[aria-label^='Wait histogram'] canvas").waitFor();
      await screenshot(dark, "steady-lane-dark");
    } finally {
      stop.now = true;
      await publishing;
    }
  });

  it("shows the failed jobs, grouped and listed", async () => {
    const page = await chrome.page();
    await page.goto(`${srv.ui}#/lanes/default/jobs/failed`);
    await page.getByRole("row").filter({ hasText: "timed out after 30 s" }).first().waitFor();
    await screenshot(page, "steady-failed");
    await page.goto(`${srv.ui}#/failures`);
    const groups = page.getByRole("table", { name: "Failure groups" });
    await groups.waitFor();
    await waitForText(
      groups,
      (t) => t.includes("does not exist") && t.includes("timed out"),
      "both kinds",
    );
    await screenshot(page, "steady-failures");
    // A job's page, with the error's stack and the history of both attempts.
    await page.goto(`${srv.ui}#/lanes/default/jobs/failed?q=timed%20out`);
    const link = page.getByRole("link", { name: /^Job / }).first();
    await link.click();
    await page.locator("pre.stack").waitFor();
    await waitForText(
      page.locator("ol.timeline"),
      (t) => /retrying.*failed/.test(t),
      "both attempts",
    );
    await screenshot(page, "steady-job");
    expect(chrome.errors).toEqual([]);
  });
});
