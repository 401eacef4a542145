/**
 * `npm run demo -- --dashboard`, run as a user runs it: it prints the dashboard's URL,
 * serves it while the jobs run (the page follows them live), keeps serving after the
 * table is printed, with the worker still running (a dead job retried from the page
 * succeeds), and stops on Ctrl-C (SIGINT to its process group, as a terminal sends it).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, screenshot, type TestBrowser, waitFor, waitForText } from "./helpers.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

let chrome: TestBrowser & { errors: string[] };
let demo: ChildProcess | undefined;
const lines: string[] = [];
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

beforeAll(async () => {
  chrome = await launchBrowser();
  // PORT=0: a free port; the demo prints the one it got. Its own process group, so
  // SIGINT reaches npm and node together, as Ctrl-C in a terminal does.
  demo = spawn("npm", ["run", "demo", "--", "--dashboard"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0" },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  exited = new Promise((resolve) =>
    demo?.once("exit", (code, signal) => resolve({ code, signal })),
  );
  let buffer = "";
  const take = (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  };
  demo.stdout?.on("data", take);
  demo.stderr?.on("data", take);
});

afterAll(async () => {
  // Only if the test did not stop it (npm ends by the SIGINT: a signalCode, no exitCode).
  if (demo?.pid !== undefined && demo.exitCode === null && demo.signalCode === null) {
    try {
      process.kill(-demo.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await chrome?.close();
});

describe("npm run demo -- --dashboard", () => {
  it("serves the dashboard while the jobs run and after, until Ctrl-C", async () => {
    const urlLine = await waitFor(
      () => lines.find((l) => l.startsWith("dashboard: ")),
      `the dashboard's URL (output so far: ${lines.join(" | ")})`,
      60_000,
    );
    const url = urlLine.slice("dashboard: ".length);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/tasklane\/ui\/$/);

    const page = await chrome.page();
    await page.goto(url);
    await page.getByRole("table", { name: "Lanes" }).waitFor();
    for (const lane of ["high_priority", "default", "low_priority"]) {
      await page.getByRole("rowheader", { name: lane }).waitFor();
    }
    // The totals follow the demo live: the succeeded total grows while the page is open.
    const succeeded = page.locator('[data-total="succeeded"]');
    const first = Number(((await succeeded.textContent()) ?? "").replace(/[^\d]/g, ""));
    await waitForText(
      succeeded,
      (t) => Number(t.replace(/[^\d]/g, "")) > first,
      "the succeeded total to grow",
      30_000,
    );
    // The events chart has counted whole seconds of them.
    const chart = page.locator(".chart[aria-label^='Events per second']");
    await waitFor(
      async () =>
        /succeeded [1-9]/.test((await chart.getAttribute("aria-label")) ?? "") || undefined,
      "the chart to count succeeded events",
      30_000,
    );
    await screenshot(page, "demo-lanes-running");

    // The demo prints its table and keeps serving.
    await waitFor(() => lines.some((l) => l.startsWith("all lanes")), "the demo's table", 60_000);
    await waitFor(
      () => lines.some((l) => l.includes("The dashboard is still at")),
      "the keep-serving line",
    );
    // Without a reload: the chart holds every second since the page opened.
    await waitForText(
      succeeded,
      (t) => Number(t.replace(/[^\d]/g, "")) >= 2_500,
      "the totals after the run",
    );
    await screenshot(page, "demo-lanes-done");

    // A dead job retried from the page runs on the worker that is still running.
    await page.goto(`${url}#/lanes/default/jobs/failed`);
    const row = page.getByRole("row").filter({ hasText: "this job always fails" }).first();
    await row.waitFor();
    await screenshot(page, "demo-failed");
    const link = row.getByRole("link", { name: /^Job / });
    const id = ((await link.getAttribute("aria-label")) ?? "").slice("Job ".length);
    await row.getByRole("button", { name: `Retry job ${id}` }).click();
    await page.getByText(/Job .* retried/).waitFor();
    // It runs again (and, as this kind always does, fails again): its history shows it.
    await page.goto(`${url}#/job/default/${id}`);
    await waitForText(
      page.locator("ol.timeline"),
      (t) => /retried.*reserved/.test(t),
      "the retried job to be reserved again",
      30_000,
    );

    // (The page's event stream is cut when the demo stops: errors after this are expected.)
    expect(chrome.errors).toEqual([]);
    process.kill(-(demo?.pid ?? 0), "SIGINT");
    // The demo closes the worker and the server and exits 0; npm, which got the same
    // SIGINT, then ends by it, as it does on a terminal's Ctrl-C.
    const end = await exited;
    expect(end.code === 0 || end.signal === "SIGINT", JSON.stringify(end)).toBe(true);
    expect(lines).toContain("Stopped: the worker and the dashboard are closed.");
  }, 120_000);
});
