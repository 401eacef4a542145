import { describe, expect, it } from "vitest";
import { renderPng, renderWaitChart } from "./chart.ts";
import type { LaneResult, RunResult } from "./engine.ts";

const LANES = [
  { name: "high", priority: 100 },
  { name: "default", priority: 40 },
  { name: "low", priority: 5 },
];

function run(workload: string, selector: string, p99WaitMs: number[]): RunResult {
  return {
    workload,
    selector,
    lanes: LANES.map(
      (lane, i): LaneResult => ({
        ...lane,
        arrived: 1,
        served: 1,
        meanWaitMs: 1,
        p50WaitMs: 1,
        p99WaitMs: p99WaitMs[i] ?? 1,
        maxServedWaitMs: 1,
        maxServedWaitArrivedAtMs: 0,
        oldestWaitingMs: 0,
        longestWaitMs: 1,
        waitingAtEnd: 0,
        share: 0,
        selections: 1,
      }),
    ),
    served: 3,
    requests: 3,
    receives: 3,
    emptyReceives: 0,
    probes: 0,
    idlePolls: 0,
    requestsPerJob: 1,
    requestsPerSec: 1,
    utilisation: 0,
    selections: 3,
  };
}

/** The text of every <text> element, in order. */
const texts = (svg: string) =>
  [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((match) => match[1] ?? "");

// Waits from 5 ms to 7.75 min, as on the shipped workloads.
const results = [
  run("kale-steady", "reduced-lottery", [150, 190, 600]),
  run("kale-steady", "hinted-stride+aging=100", [160, 200, 850]),
  run("starvation", "reduced-lottery", [118_000, 3_600, 21_000]),
  run("starvation", "hinted-stride+aging=100", [5, 1_900, 465_000]),
];

describe("renderWaitChart", () => {
  it("labels both ends of the one wait axis every panel shares, in units", async () => {
    const labels = texts(await renderWaitChart(results, "title"));
    // One axis per workload panel, each from 1 ms to the first labelled tick above 7.75 min.
    for (const tick of ["1 ms", "100 ms", "1 s", "1 min", "10 min"]) {
      expect(labels.filter((text) => text === tick)).toHaveLength(2);
    }
    expect(labels).not.toContain("1 h");
    expect(labels.filter((text) => text === "p99 wait (log scale)")).toHaveLength(2);
    expect(labels).toContain("kale-steady");
    expect(labels).toContain("starvation");
  });

  it("writes every selector and lane label in full", async () => {
    const svg = await renderWaitChart(results, "title");
    const labels = texts(svg);
    expect(svg).not.toContain("…");
    expect(labels).toContain("hinted-stride+aging=100");
    expect(labels).toContain("reduced-lottery (default)");
    for (const lane of ["high (priority 100)", "default (priority 40)", "low (priority 5)"]) {
      expect(labels).toContain(lane);
    }
  });

  it("starts the axis at the decade below the shortest wait", async () => {
    const labels = texts(await renderWaitChart(results.slice(0, 2), "title"));
    expect(labels).toContain("100 ms");
    expect(labels).toContain("1 s");
    expect(labels).not.toContain("10 ms");
  });
});

describe("renderPng", () => {
  it("renders the chart as a PNG twice its size", async () => {
    const svg = await renderWaitChart(results.slice(0, 1), "title");
    const png = renderPng(svg);
    const width = Number(/<svg[^>]* width="(\d+)"/.exec(svg)?.[1]);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    // The IHDR chunk's width, big-endian at byte 16.
    expect(Buffer.from(png).readUInt32BE(16)).toBe(2 * width);
  });
});
