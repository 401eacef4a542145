/**
 * What the dashboard offers follows what the adapter can do (GET /'s capabilities): on SQS
 * (fauxqs, a real SQS-protocol server in-process), and on a memory adapter that declares
 * fewer capabilities than it has. Unsupported actions are hidden or disabled with the
 * reason, and nothing the page does reaches an endpoint that would answer 501.
 */
import { randomUUID } from "node:crypto";
import { SQSClient } from "@aws-sdk/client-sqs";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createSqsAdapter } from "@tasklane/adapter-sqs";
import {
  type Adapter,
  type Capabilities,
  createTasklane,
  defineTask,
  type Tasklane,
  UnrecoverableError,
} from "@tasklane/core";
import { startFauxqs } from "fauxqs";
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

const report = defineTask({
  name: "report",
  lane: "low",
  schema: z.object({ day: z.string() }),
  run: () => {},
});
const fails = defineTask({
  name: "fails",
  lane: "default",
  schema: z.object({ n: z.number() }),
  retry: { maxAttempts: 1 },
  run: () => {
    throw new UnrecoverableError("boom");
  },
});

let chrome: TestBrowser & { errors: string[] };

beforeAll(async () => {
  chrome = await launchBrowser();
});

afterAll(async () => {
  await chrome?.close();
});

/** Every API request the page made that answered 501. */
function watch501(page: import("playwright-core").Page): string[] {
  const seen: string[] = [];
  page.on("response", (r) => {
    if (r.status() === 501) seen.push(`${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  return seen;
}

describe("on SQS", () => {
  let stopSqs: () => Promise<void>;
  let sqs: SQSClient;
  let tl: Tasklane;
  let srv: TestServer;

  beforeAll(async () => {
    const server = await startFauxqs({ port: 0, logger: false });
    stopSqs = () => server.stop();
    sqs = new SQSClient({
      endpoint: `http://127.0.0.1:${server.port}`,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    });
    tl = createTasklane({
      adapter: createSqsAdapter({ client: sqs }),
      namespace: `d${randomUUID().slice(0, 8)}`,
      lanes: [{ name: "default" }, { name: "low" }],
      tasks: [report, fails],
    });
    srv = await serveDashboard(tl, { allowAnonymousWrites: true });
  }, 60_000);

  afterAll(async () => {
    await srv?.close();
    await tl?.close();
    sqs?.destroy();
    await stopSqs?.();
  });

  it("shows approximate counts, and hides or disables what SQS cannot do, saying why", async () => {
    await tl.publishMany(report, [{ payload: { day: "a" } }, { payload: { day: "b" } }]);
    const page = await chrome.page();
    const refused = watch501(page);
    await page.goto(srv.ui);
    const low = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "low" }) });
    // SQS's approximate count catches up within a few reads; shown with a "~".
    await waitForText(low.getByRole("cell").nth(1), (t) => t === "~2", "low's ~2 waiting", 30_000);
    await page.getByText("The sqs adapter counts approximately").waitFor();
    // Counts are not links (no job lists), pausing is hidden, stats are absent.
    expect(await low.getByRole("cell").getByRole("link").count()).toBe(0);
    expect(await page.getByRole("button", { name: /^(Pause|Resume) / }).count()).toBe(0);
    await page.getByText("The sqs adapter cannot list jobs.").waitFor();
    await page.getByText("The sqs adapter cannot keep wait and run stats.").waitFor();
    // No cross-process events: the chart says it shows this server's own jobs.
    await page.getByText("has no cross-process events").waitFor();
    // Finding a job by id needs get: the box is not there.
    expect(await page.getByPlaceholder("Job id").count()).toBe(0);
    // No flows (nothing is ever blocked) and no expiry: neither column is there.
    const headers = await page.getByRole("table", { name: "Lanes" }).getByRole("columnheader");
    expect(await headers.allTextContents()).not.toContain("blocked");
    expect(await headers.allTextContents()).not.toContain("expired");
    await screenshot(page, "sqs-lanes");

    await page.goto(`${srv.ui}#/lanes/default/jobs/failed`);
    await page
      .getByText("The sqs adapter cannot list jobs. The counts above are all it reports.")
      .waitFor();
    expect(await page.getByRole("table").count()).toBe(0);
    await page.goto(`${srv.ui}#/job/default/some-id`);
    await page.getByText("The sqs adapter cannot find a job by id.").waitFor();
    expect(await page.getByRole("button", { name: "Retry" }).count()).toBe(0);
    await page.goto(`${srv.ui}#/failures`);
    await page.getByText("Failed jobs cannot be read, only counted").waitFor();
    await page.goto(`${srv.ui}#/lanes/low`);
    await page.getByText("Wait and run times are not available.").waitFor();
    // No schedules on SQS: the view says so and never asks for them (no 501 below).
    await page.goto(`${srv.ui}#/schedules`);
    await page
      .getByText("The sqs adapter cannot list schedules. Recurring schedules are not listed.")
      .waitFor();
    expect(await page.getByRole("table").count()).toBe(0);
    expect(refused).toEqual([]);
    expect(chrome.errors).toEqual([]);
  });
});

/**
 * The dashboard over a memory adapter named `name` that declares `caps` otherwise, served
 * around the enclosing describe block; its fields are set once the block's tests run.
 */
function servedOnMemory(name: string, caps: Partial<Capabilities>) {
  const served = {} as { tl: Tasklane; srv: TestServer };
  beforeAll(async () => {
    const memory = createMemoryAdapter();
    const adapter: Adapter = {
      ...memory,
      name,
      capabilities: { ...memory.capabilities, ...caps },
    };
    served.tl = createTasklane({
      adapter,
      lanes: [{ name: "default" }, { name: "low" }],
      tasks: [report, fails],
    });
    served.srv = await serveDashboard(served.tl, { allowAnonymousWrites: true });
  });
  afterAll(async () => {
    await served.srv?.close();
    await served.tl?.close();
  });
  return served;
}

describe("on an adapter that declares fewer capabilities", () => {
  const served = servedOnMemory("limited", { retryFailed: false, delete: false, pause: false });

  it("disables retry and delete with the reason, hides pause, and keeps what it can do", async () => {
    const { tl, srv } = served;
    await tl.publish(fails, { n: 1 });
    const worker = tl.worker({ concurrency: 1, lanes: ["default"] });
    await worker.start();
    await waitFor(async () => (await tl.lane("default").counts()).failed === 1, "a failed job");
    await worker.stop();
    const page = await chrome.page();
    const refused = watch501(page);
    await page.goto(srv.ui);
    // The API cannot tell whether the lane is paused (paused: null): no button.
    await page.getByRole("table", { name: "Lanes" }).waitFor();
    expect(await page.getByRole("button", { name: /^(Pause|Resume) / }).count()).toBe(0);

    await page.goto(`${srv.ui}#/lanes/default/jobs/failed`);
    const row = page.getByRole("row").filter({ hasText: "UnrecoverableError: boom" });
    await row.waitFor();
    const retry = row.getByRole("button", { name: /^Retry job / });
    expect(await retry.isDisabled()).toBe(true);
    expect(await retry.getAttribute("title")).toBe("The limited adapter cannot retry failed jobs.");
    expect(await page.getByRole("button", { name: "Delete all failed…" }).isDisabled()).toBe(true);
    await page
      .getByText(
        "The limited adapter cannot retry failed jobs. The limited adapter cannot delete jobs.",
      )
      .waitFor();
    // Listing still works: select the job; the bulk buttons stay disabled.
    await row.getByRole("checkbox").check();
    expect(await page.getByRole("button", { name: "Retry selected" }).isDisabled()).toBe(true);
    await screenshot(page, "limited-failed");

    // Waiting jobs can still be canceled.
    const { id } = await tl.publish(report, { day: "x" });
    await page.goto(`${srv.ui}#/job/low/${id}`);
    const cancel = page.getByRole("button", { name: "Cancel", exact: true });
    await cancel.waitFor();
    expect(await cancel.isEnabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Delete" }).isDisabled()).toBe(true);
    await cancel.click();
    await waitFor(async () => (await tl.lane("low").get(id))?.state === "canceled", "canceled");
    await page.getByRole("status").or(page.locator(".badge.state-canceled")).first().waitFor();
    expect(refused).toEqual([]);
    expect((await tl.lane("default").counts()).failed).toBe(1);
  });
});

describe("on an adapter that cannot group failures or search", () => {
  const served = servedOnMemory("groupless", {
    failureGroups: false,
    search: false,
    tags: false,
  });

  it("groups the failed jobs in the browser, says so, and retries a group", async () => {
    const { tl, srv } = served;
    await tl.publishMany(fails, [{ payload: { n: 1 } }, { payload: { n: 2 } }]);
    const worker = tl.worker({ concurrency: 2, lanes: ["default"] });
    await worker.start();
    await waitFor(async () => (await tl.lane("default").counts()).failed === 2, "2 failed");
    await worker.stop();
    const page = await chrome.page();
    const refused = watch501(page);
    await page.goto(`${srv.ui}#/failures`);
    const group = page
      .getByRole("table", { name: "Failure groups" })
      .getByRole("row")
      .filter({ hasText: "boom" });
    await waitForText(group, (t) => t.includes("UnrecoverableError"), "the group");
    expect(await group.getByRole("cell").nth(3).textContent()).toBe("2");
    await page.getByText("The groupless adapter cannot group failures.").waitFor();
    await group.getByRole("button", { name: /^Retry 2 fails jobs/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Retry" }).click();
    await waitFor(
      async () => (await tl.lane("default").counts()).waiting === 2,
      "the group back to waiting",
    );
    await group.waitFor({ state: "detached" });
    expect(refused).toEqual([]);
  });
});
