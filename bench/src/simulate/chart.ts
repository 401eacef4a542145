import { parse, View } from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { RunResult } from "./engine.ts";

/**
 * Grouped bars: p99 wait per lane (groups) per selector (bars), one panel per workload,
 * each panel with its own log-scaled y axis (waits range from milliseconds to minutes).
 */
export async function renderWaitChart(
  results: ReadonlyArray<RunResult>,
  title: string,
): Promise<string> {
  const values = results.flatMap((r) =>
    r.lanes.map((lane) => ({
      workload: r.workload,
      selector: r.selector,
      lane: lane.name,
      p99WaitMs: Math.max(1, Math.round(lane.p99WaitMs)),
      longestWaitMs: Math.round(lane.longestWaitMs),
    })),
  );
  const laneOrder = [...new Set(values.map((v) => v.lane))];
  const selectorOrder = [...new Set(values.map((v) => v.selector))];
  const spec: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: title, subtitle: "p99 wait per lane, by selector (log scale; lower is better)" },
    data: { values },
    facet: {
      column: {
        field: "workload",
        type: "nominal",
        sort: [...new Set(values.map((v) => v.workload))],
        title: null,
      },
    },
    spec: {
      width: 230,
      height: 240,
      mark: { type: "bar", tooltip: true },
      encoding: {
        x: { field: "lane", type: "nominal", sort: laneOrder, title: "lane" },
        xOffset: { field: "selector", type: "nominal", sort: selectorOrder },
        y: {
          field: "p99WaitMs",
          type: "quantitative",
          // A log scale has no zero: without an explicit base (domainMin + y2) vega
          // draws the axis but no bars at all.
          scale: { type: "log", domainMin: 1 },
          title: "p99 wait (ms)",
        },
        y2: { datum: 1 },
        color: {
          field: "selector",
          type: "nominal",
          sort: selectorOrder,
          scale: { scheme: "tableau10" },
        },
      },
    },
    resolve: { scale: { y: "independent" } },
    config: { font: "sans-serif", background: "white" },
  };
  const view = new View(parse(compile(spec).spec), { renderer: "none" });
  return view.toSVG();
}
