/**
 * The dashboard in a real chromium against a real redis-server: the API and the page are
 * served by one process's client; jobs are published and run by a second client (another
 * "process" on its own connections), and what the page does is checked in Redis through
 * that second client.
 */
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane, defineTask, type Tasklane } from "@tasklane/core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type RedisServer, startRedis, uniquePrefix } from "../../adapter-redis/test/helpers.ts";
import {
  launchBrowser,
  screenshot,
  serveDashboard,
  signIn,
  type TestBrowser,
  type TestServer,
  waitFor,
  waitForText,
} from "./helpers.ts";

/** Card numbers the "bank" declines, or finds expired; a test takes one off to let a retry succeed. */
const declined = new Set<string>();
const expired = new Set<string>();

/** An expired card's error: a failure group of its own (groups are by error name). */
class CardExpiredError extends Error {
  override name = "CardExpiredError";
}

const charge = defineTask({
  name: "charge",
  lane: "default",
  schema: z.object({ card: z.string(), cents: z.number().int() }),
  retry: { maxAttempts: 1 },
  run: ({ card }) => {
    if (declined.has(card)) throw new Error(`card ${card} was declined`);
    if (expired.has(card)) throw new CardExpiredError(`card ${card} has expired`);
  },
});

const report = defineTask({
  name: "report",
  lane: "low",
  schema: z.object({ day: z.string() }),
  run: () => {},
});

const TOKENS: Record<string, "read" | "write"> = { "w-token": "write", "r-token": "read" };

let redis: RedisServer;
let served: Tasklane;
let other: Tasklane;
let srv: TestServer;
let chrome: TestBrowser & { errors: string[] };

const client = (prefix: string) =>
  createTasklane({
    adapter: createRedisAdapter({ connection: redis.url, prefix, lifecycleEvents: true }),
    lanes: [
      { name: "high", priority: 100 },
      { name: "default", priority: 40 },
      { name: "low", priority: 5 },
    ],
    tasks: [charge, report],
  });

/** The count link of a lane and state on the lanes page (its accessible name says which). */
const countLink = (page: Page, lane: string, state: string) =>
  page.getByRole("link", { name: new RegExp(`^\\d[\\d,]* ${state} in ${lane}$`) });

const countOf = async (page: Page, lane: string, state: string) =>
  Number(((await countLink(page, lane, state).textContent()) ?? "").replace(/[^\d]/g, ""));

beforeAll(async () => {
  redis = await startRedis();
  const prefix = uniquePrefix();
  served = client(prefix);
  other = client(prefix);
  srv = await serveDashboard(served, {
    authorize: (request) => {
      const auth = request.headers.get("authorization") ?? "";
      return TOKENS[auth.replace(/^Bearer /, "")] ?? false;
    },
  });
  chrome = await launchBrowser();
});

afterAll(async () => {
  await chrome?.close();
  await srv?.close();
  await served?.close();
  await other?.close();
  await redis?.stop();
});

describe("the dashboard on Redis", () => {
  it("asks for a token, refuses a wrong one, and keeps the right one for the tab", async () => {
    const page = await chrome.page();
    await page.goto(srv.ui);
    await page.getByLabel("Token").fill("nope");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("That token was not accepted").waitFor();
    await page.getByLabel("Token").fill("w-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("table", { name: "Lanes" }).waitFor();
    // Reloading the tab keeps it (sessionStorage); a new context (a new tab) has none.
    await page.reload();
    await page.getByRole("table", { name: "Lanes" }).waitFor();
    const fresh = await chrome.page();
    await fresh.goto(srv.ui);
    await fresh.getByLabel("Token").waitFor();
  });

  it("updates counts live as another process publishes, without a reload and without moving the table", async () => {
    const page = await chrome.page();
    await signIn(page, srv.ui, "w-token");
    await page.locator(".live-live").waitFor();
    const before = await countOf(page, "low", "waiting");
    const table = page.getByRole("table", { name: "Lanes" });
    const boxBefore = await table.boundingBox();
    const navigations: string[] = [];
    page.on("framenavigated", (frame) => navigations.push(frame.url()));

    await other.publishMany(
      report,
      Array.from({ length: 7 }, (_, i) => ({ payload: { day: `2026-11-${10 + i}` } })),
    );
    await waitForText(
      countLink(page, "low", "waiting"),
      (text) => Number(text.replace(/[^\d]/g, "")) === before + 7,
      `low's waiting count to reach ${before + 7}`,
    );
    const total = page.locator('[data-total="waiting"]');
    await waitForText(total, (t) => Number(t.replace(/[^\d]/g, "")) >= before + 7, "the total");
    expect(navigations).toEqual([]);
    expect(await table.boundingBox()).toEqual(boxBefore);
    // Events per second counted them: the chart's label says so once that second is over.
    const chart = page.locator(".chart[aria-label^='Events per second']");
    await waitFor(
      async () =>
        /published [1-9]/.test((await chart.getAttribute("aria-label")) ?? "") || undefined,
      "the chart to count published events",
    );
    await screenshot(page, "redis-lanes-live");
  });

  it("shows a failed job, retries it from the page, and it runs again and succeeds in Redis", async () => {
    declined.add("4000-0002");
    const { id } = await other.publish(charge, { card: "4000-0002", cents: 1299 });
    const worker = other.worker({ concurrency: 4, lanes: ["default"] });
    await worker.start();
    try {
      await waitFor(
        async () => (await other.lane("default").get(id))?.state === "failed",
        "the job to fail",
      );

      const page = await chrome.page();
      await signIn(page, srv.ui, "w-token");
      await waitForText(countLink(page, "default", "failed"), (t) => t.trim() === "1", "1 failed");
      await countLink(page, "default", "failed").click();
      const row = page.getByRole("row").filter({ hasText: "card 4000-0002 was declined" });
      await row.waitFor();
      expect(await row.textContent()).toContain("charge");
      await screenshot(page, "redis-failed");

      // The job's page: payload, error and stack, history.
      await row.getByRole("link", { name: `Job ${id}` }).click();
      await page.getByRole("heading", { name: "Error" }).waitFor();
      expect(await page.locator("pre.stack").textContent()).toContain(
        "card 4000-0002 was declined",
      );
      expect(await page.getByRole("region", { name: "Payload" }).textContent()).toContain(
        '"cents": 1299',
      );
      await screenshot(page, "redis-job-failed");
      await page.goBack();
      await row.waitFor();

      // The card works now: retry from the list.
      declined.delete("4000-0002");
      await row.getByRole("button", { name: `Retry job ${id}` }).click();
      await page
        .getByText(/retried/)
        .first()
        .waitFor();
      const job = await waitFor(async () => {
        const j = await other.lane("default").get(id);
        return j?.state === "succeeded" ? j : undefined;
      }, "the retried job to succeed in Redis");
      expect(job.history.map((h) => h.event)).toEqual([
        "published",
        "reserved",
        "failed",
        "retried",
        "reserved",
        "succeeded",
      ]);
      // The list follows: the job leaves Failed, the count goes to 0.
      await row.waitFor({ state: "detached" });
      await waitForText(
        page.getByRole("navigation", { name: "Job states" }).getByRole("link", { name: /^failed/ }),
        (t) => /failed\s*0$/.test(t.trim()),
        "the failed tab's count to be 0",
      );
    } finally {
      await worker.stop();
    }
  });

  it("retries every failed job after a confirmation, and changes nothing when it is canceled", async () => {
    declined.add("4000-0003");
    await other.publishMany(
      charge,
      Array.from({ length: 5 }, (_, i) => ({ payload: { card: "4000-0003", cents: i } })),
    );
    const worker = other.worker({ concurrency: 4, lanes: ["default"] });
    await worker.start();
    try {
      await waitFor(async () => (await other.lane("default").counts()).failed === 5, "5 failed");
      declined.delete("4000-0003");
      const page = await chrome.page({ colorScheme: "dark" });
      await signIn(page, `${srv.ui}#/lanes/default/jobs/failed`, "w-token");
      await page
        .getByRole("row")
        .filter({ hasText: "card 4000-0003 was declined" })
        .first()
        .waitFor();
      await screenshot(page, "redis-failed-dark");

      await page.getByRole("button", { name: "Retry all failed…" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain("5 failed jobs back to waiting");
      // A safe action: the focus is on its button; Escape cancels.
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      expect((await other.lane("default").counts()).failed).toBe(5);

      await page.getByRole("button", { name: "Retry all failed…" }).click();
      await dialog.getByRole("button", { name: "Retry all" }).click();
      await waitFor(async () => {
        const c = await other.lane("default").counts();
        return c.failed === 0 && c.succeeded >= 6;
      }, "every failed job to be retried and succeed");
      await page.locator("p.empty").getByText("No failed jobs.").waitFor();
    } finally {
      await worker.stop();
    }
  });

  it("asks before deleting, with the focus on Cancel", async () => {
    const { id } = await other.publish(report, { day: "delete-me" });
    const page = await chrome.page();
    await signIn(page, `${srv.ui}#/job/low/${encodeURIComponent(id)}`, "w-token");
    await page.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    expect(await page.locator(":focus").textContent()).toBe("Cancel");
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "hidden" });
    expect((await other.lane("low").get(id))?.state).toBe("waiting");
    await page.getByRole("button", { name: "Delete" }).click();
    await dialog.getByRole("button", { name: "Delete" }).click();
    await waitFor(
      async () => (await other.lane("low").get(id)) === undefined,
      "the job to be deleted",
    );
  });

  it("deletes selected jobs after a confirmation, leaving the others", async () => {
    const jobs = await other.publishMany(
      report,
      ["sel-1", "sel-2", "sel-3"].map((day) => ({ payload: { day } })),
    );
    const page = await chrome.page();
    await signIn(page, `${srv.ui}#/lanes/low/jobs/waiting?q=sel-`, "w-token");
    for (const { id } of jobs.slice(0, 2)) {
      await page.getByRole("checkbox", { name: `Select job ${id}` }).check();
    }
    await page.getByRole("button", { name: "Delete selected" }).click();
    const dialog = page.getByRole("dialog");
    expect(await dialog.getByRole("heading").textContent()).toBe("Delete 2 selected jobs?");
    await dialog.getByRole("button", { name: "Delete" }).click();
    await waitFor(async () => {
      const [a, b, c] = await Promise.all(jobs.map(({ id }) => other.lane("low").get(id)));
      return a === undefined && b === undefined && c?.state === "waiting";
    }, "the two selected jobs deleted, the third left");
    await page
      .getByRole("checkbox", { name: `Select job ${jobs[0]?.id}` })
      .waitFor({ state: "detached" });
  });

  it("pauses and resumes a lane", async () => {
    const page = await chrome.page();
    await signIn(page, srv.ui, "w-token");
    await page.getByRole("button", { name: "Pause high" }).click();
    await page.getByRole("button", { name: "Resume high" }).waitFor();
    expect(await other.lane("high").isPaused()).toBe(true);
    await page.getByRole("button", { name: "Resume high" }).click();
    await page.getByRole("button", { name: "Pause high" }).waitFor();
    expect(await other.lane("high").isPaused()).toBe(false);
  });

  it("offers no writes to a read-only token, and says why", async () => {
    declined.add("4000-0004");
    const { id } = await other.publish(charge, { card: "4000-0004", cents: 1 });
    const worker = other.worker({ concurrency: 1, lanes: ["default"] });
    await worker.start();
    await waitFor(async () => (await other.lane("default").get(id))?.state === "failed", "failed");
    await worker.stop();
    const page = await chrome.page();
    await signIn(page, `${srv.ui}#/lanes/default/jobs/failed`, "r-token");
    await page.getByText("read-only", { exact: true }).waitFor();
    const retry = page.getByRole("button", { name: `Retry job ${id}` });
    await retry.waitFor();
    expect(await retry.isDisabled()).toBe(true);
    expect(await retry.getAttribute("title")).toBe("Your access is read-only.");
    expect(await page.getByRole("button", { name: "Pause" }).count()).toBe(0);
    expect((await other.lane("default").get(id))?.state).toBe("failed");
  });

  it("shows the failure groups Redis counts, and retries a group", async () => {
    expired.add("4000-0005");
    await other.publishMany(
      charge,
      Array.from({ length: 3 }, (_, i) => ({ payload: { card: "4000-0005", cents: i } })),
    );
    const worker = other.worker({ concurrency: 4, lanes: ["default"] });
    await worker.start();
    try {
      await waitFor(async () => (await other.lane("default").counts()).failed >= 3, "3 failed");
      const page = await chrome.page();
      await signIn(page, `${srv.ui}#/failures`, "w-token");
      // Redis's failure index groups them by error name (the API's failure-groups): one
      // group for the three, the latest's message shown.
      const groups = page.getByRole("table", { name: "Failure groups" });
      const group = groups.getByRole("row").filter({ hasText: "CardExpiredError" });
      await waitForText(
        group,
        (t) => t.includes("CardExpiredError: card 4000-0005 has expired"),
        "the group",
      );
      expect(await group.getByRole("cell").nth(2).textContent()).toBe("3");
      expect(await page.getByText("cannot group failures").count()).toBe(0);
      await screenshot(page, "redis-failures");
      expired.delete("4000-0005");
      await group.getByRole("button", { name: /^Retry the 3 CardExpiredError jobs/ }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Retry" }).click();
      await group.waitFor({ state: "detached" });
      await waitFor(
        async () => (await other.lane("default").counts()).failed === 1,
        "only the read-only test's job left failed",
      );
    } finally {
      await worker.stop();
    }
  });

  it("finds a job by id, and is usable from the keyboard", async () => {
    const { id } = await other.publish(report, { day: "find-me" });
    const page = await chrome.page();
    await signIn(page, srv.ui, "w-token");
    // The first Tab reaches the skip link; it moves the focus to the content.
    await page.keyboard.press("Tab");
    expect(await page.locator(":focus").textContent()).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.locator(":focus").getAttribute("id")).toBe("main");
    await page.getByPlaceholder("Job id").fill(id);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: id }).waitFor();
    expect(await page.getByRole("region", { name: "Payload" }).textContent()).toContain("find-me");
    expect(page.url()).toContain(`#/job/low/${id}`);
  });

  it("shows wait and run histograms for a lane", async () => {
    const page = await chrome.page();
    await signIn(page, `${srv.ui}#/lanes/default`, "w-token");
    const wait = page.locator(".chart[aria-label^='Wait histogram']");
    await wait.waitFor();
    expect(await wait.getAttribute("aria-label")).toMatch(/Wait histogram: \d+ in /);
    expect(await page.locator(".chart[aria-label^='Run histogram'] canvas").count()).toBe(1);
    await screenshot(page, "redis-lane");
  });

  it("says so when the token stops being accepted, and asks for one again", async () => {
    TOKENS["short-lived"] = "write";
    const page = await chrome.page();
    await signIn(page, srv.ui, "short-lived");
    delete TOKENS["short-lived"];
    // The lanes are re-read every 5 s: the next read gets the 401.
    await page.getByText("The management API no longer accepts this session").waitFor();
    await page.getByRole("button", { name: "Sign in again" }).click();
    await page.getByLabel("Token").fill("w-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("table", { name: "Lanes" }).waitFor();
  });

  it("logged no errors in the browser", () => {
    expect(chrome.errors).toEqual([]);
  });
});
