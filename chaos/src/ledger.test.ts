/**
 * The ledger survives kill -9 of the process writing it, and the recording adapter writes
 * what a worker does on a real (memory) adapter.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane } from "@tasklane/core";
import { afterEach, describe, expect, it } from "vitest";
import { openLedger, readLedgerFile, readLedgers } from "./ledger.ts";
import { buildFacts, outcomeOf } from "./runs.ts";
import { defineChaosTask } from "./worker/chaos-task.ts";
import { createRecordingAdapter } from "./worker/recording-adapter.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tasklane-chaos-ledger-"));
  dirs.push(dir);
  return dir;
}

describe("ledger", () => {
  it("keeps every line a process wrote before it was killed with SIGKILL", async () => {
    const path = join(tempDir(), "w0-1.jsonl");
    const ledgerUrl = new URL("./ledger.ts", import.meta.url).href;
    const script = `
      const { openLedger } = await import(${JSON.stringify(ledgerUrl)});
      const ledger = openLedger(${JSON.stringify(path)});
      for (let i = 0; i < 5000; i++) ledger.write({ e: "start", t: Date.now(), id: "j" + i, a: 1 });
      process.send({ written: 5000 });
      setInterval(() => ledger.write({ e: "lag", t: Date.now(), ms: 0 }), 1);
    `;
    const child = spawn(
      process.execPath,
      ["--conditions=source", "--input-type=module", "--eval", script],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    );
    await once(child, "message");
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
    const ledger = readLedgerFile(path, 0, 1);
    expect(ledger.torn).toBe(0);
    expect(ledger.entries.filter((e) => e.e === "start")).toHaveLength(5000);
  });

  it("records reservations, handler runs and acks through the recording adapter", async () => {
    const dir = tempDir();
    const ledger = openLedger(join(dir, "w0-42.jsonl"));
    const adapter = createRecordingAdapter(createMemoryAdapter(), ledger);
    const task = defineChaosTask("l", { maxAttempts: 2, baseMs: 10, jitter: 0 }, async (p, ctx) => {
      ledger.write({ e: "start", t: Date.now(), id: ctx.jobId, a: ctx.attempt });
      if (p.k === "fail1" && ctx.attempt === 1) throw new Error("first attempt");
    });
    const tl = createTasklane({ adapter, lanes: [{ name: "l", leaseMs: 5_000 }], tasks: [task] });
    await tl.publish(task, { k: "ok", ms: 0 }, { jobId: "a" });
    await tl.publish(task, { k: "fail1", ms: 0 }, { jobId: "b" });
    const succeeded = new Set<string>();
    const done = new Promise<void>((resolve) =>
      tl.events.on("succeeded", (e) => {
        succeeded.add(e.jobId);
        if (succeeded.size === 2) resolve();
      }),
    );
    await tl.worker({ concurrency: 2 }).start();
    await done;
    await tl.close();
    const facts = buildFacts(readLedgers(dir), 5_000);
    const a = facts.jobs.get("a") ?? [];
    const b = facts.jobs.get("b") ?? [];
    expect(
      a.map((r) => [r.attempt, r.startedAt !== undefined, outcomeOf(r).terminal?.kind]),
    ).toEqual([[1, true, "ack"]]);
    expect(b.map((r) => r.attempt)).toEqual([1, 2]);
    expect(outcomeOf(b[0]!).retry?.runAt).toBeTypeOf("number");
    expect(outcomeOf(b[1]!).terminal?.result).toBe("ok");
  });
});
