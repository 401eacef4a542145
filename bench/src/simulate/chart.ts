import { Resvg } from "@resvg/resvg-js";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { RunResult } from "./engine.ts";

/**
 * Labelled ticks of the wait axis, ms. The axis runs from the last of them at or below the
 * shortest p99 to the first at or above the longest, so both ends are labelled ticks.
 */
const TICKS_MS = [1, 10, 100, 1_000, 10_000, 60_000, 600_000, 3_600_000];

/** Unlabelled ticks between them, with a fainter grid line, to read values in between. */
const MINOR_TICKS_MS = [
  2, 5, 20, 50, 200, 500, 2_000, 5_000, 20_000, 30_000, 120_000, 300_000, 1_200_000, 1_800_000,
];

const isLabelled = `indexof([${TICKS_MS.join(",")}], datum.value) >= 0`;

/** A labelled tick's label: "10 ms", "1 s", "10 min"; none for the others. */
const TICK_LABEL =
  `!(${isLabelled}) ? '' : ` +
  "datum.value < 1000 ? datum.value + ' ms' : datum.value < 60000 ? " +
  "datum.value / 1000 + ' s' : datum.value < 3600000 ? datum.value / 60000 + ' min' : " +
  "datum.value / 3600000 + ' h'";

/** What a selector is, where its name alone does not say it. */
const SELECTOR_NOTES: Record<string, string> = {
  "reduced-lottery": "reduced-lottery (default)",
  oracle: "oracle (reads the queues: a bound)",
};

const LANE_COLOURS = ["#c0392b", "#e69f00", "#0072b2", "#009e73", "#7f7f7f"];
const LANE_SHAPES = ["circle", "square", "triangle-up", "diamond", "cross"];

/** Height of one selector's row in a panel, px. */
const ROW_PX = 30;

/** Text sizes, px at 100% zoom. */
const FONT = { title: 20, subtitle: 15, header: 17, label: 14, axisTitle: 14 } as const;

/**
 * p99 wait per lane and selector, one panel per workload, stacked, on one shared log
 * scale (waits range from milliseconds to minutes; one scale lets panels be compared).
 * A panel is a dot plot: a row per selector, a dot per lane. Dots rather than bars: on a
 * log scale a bar's length depends on where the axis happens to start.
 */
export async function renderWaitChart(
  results: ReadonlyArray<RunResult>,
  title: string,
): Promise<string> {
  const lanePriority = new Map<string, number>();
  for (const r of results) for (const lane of r.lanes) lanePriority.set(lane.name, lane.priority);
  const laneLabel = (name: string) => `${name} (priority ${lanePriority.get(name) ?? "?"})`;
  const selectorLabel = (name: string) => SELECTOR_NOTES[name] ?? name;
  const values = results.flatMap((r) =>
    r.lanes.map((lane) => ({
      workload: r.workload,
      selector: selectorLabel(r.selector),
      lane: laneLabel(lane.name),
      // The axis starts at 1 ms: a shorter p99 sits on it.
      p99WaitMs: Math.max(1, lane.p99WaitMs),
      p99: formatWait(lane.p99WaitMs),
    })),
  );
  const waits = values.map((v) => v.p99WaitMs);
  const shortest = Math.min(...waits);
  const longest = Math.max(...waits);
  const bottom = TICKS_MS.findLast((tick) => tick <= shortest) ?? 1;
  const top = TICKS_MS.find((tick) => tick >= longest) ?? longest;
  const ticks = [...TICKS_MS, ...MINOR_TICKS_MS]
    .filter((tick) => tick >= bottom && tick <= top)
    .sort((a, b) => a - b);
  const laneOrder = [...new Set(values.map((v) => v.lane))];
  const selectorOrder = [...new Set(values.map((v) => v.selector))];
  const spec: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: {
      text: title,
      subtitle: [
        "p99 wait per lane (publish → start) for each selector; further left is better.",
        "One log scale for every workload.",
      ],
      anchor: "start",
      fontSize: FONT.title,
      subtitleFontSize: FONT.subtitle,
      subtitlePadding: 6,
      offset: 12,
    },
    data: { values },
    facet: {
      row: {
        field: "workload",
        type: "nominal",
        sort: [...new Set(values.map((v) => v.workload))],
        title: null,
        header: {
          labelFontSize: FONT.header,
          labelFontWeight: "bold",
          labelAngle: 0,
          labelOrient: "top",
          labelAnchor: "start",
          labelPadding: 6,
        },
      },
    },
    spacing: 22,
    spec: {
      width: 520,
      height: selectorOrder.length * ROW_PX,
      mark: { type: "point", filled: true, size: 80, opacity: 0.9, tooltip: true },
      encoding: {
        y: {
          field: "selector",
          type: "nominal",
          sort: selectorOrder,
          title: null,
          // No gap between rows: the grid lines between them are the rows' edges.
          scale: { paddingInner: 0, paddingOuter: 0 },
          axis: { labelLimit: 400, tickBand: "extent", grid: true, ticks: false, domain: false },
        },
        yOffset: {
          field: "lane",
          type: "nominal",
          sort: laneOrder,
          scale: { padding: 1 },
        },
        x: {
          field: "p99WaitMs",
          type: "quantitative",
          scale: { type: "log", domain: [bottom, top], nice: false },
          axis: {
            values: ticks,
            labelExpr: TICK_LABEL,
            title: "p99 wait (log scale)",
            grid: true,
            gridColor: { condition: { test: isLabelled, value: "#d0d0d0" }, value: "#efefef" },
            tickSize: { condition: { test: isLabelled, value: 6 }, value: 3 },
            labelFlush: false,
            // vega would drop labels it thinks collide; every tick here has room.
            labelOverlap: false,
          },
        },
        color: {
          field: "lane",
          type: "nominal",
          sort: laneOrder,
          scale: { range: LANE_COLOURS },
          legend: { title: "lane", orient: "top", direction: "horizontal", labelLimit: 400 },
        },
        shape: {
          field: "lane",
          type: "nominal",
          sort: laneOrder,
          scale: { range: LANE_SHAPES },
        },
        tooltip: [
          { field: "workload" },
          { field: "selector" },
          { field: "lane" },
          { field: "p99", title: "p99 wait" },
        ],
      },
    },
    resolve: { axis: { x: "independent" } },
    config: {
      font: "DejaVu Sans, Verdana, sans-serif",
      background: "white",
      padding: 16,
      axis: {
        labelFontSize: FONT.label,
        titleFontSize: FONT.axisTitle,
        labelColor: "#222",
        titleColor: "#222",
        gridColor: "#e0e0e0",
      },
      legend: { labelFontSize: FONT.label, titleFontSize: FONT.axisTitle, symbolSize: 120 },
      view: { stroke: "#bbb" },
    },
  };
  return withTextWidths(() =>
    new vega.View(vega.parse(compile(spec).spec), { renderer: "none" }).toSVG(),
  );
}

/**
 * vega's text measure, which falls back to an estimate of 0.8 em a character when no
 * canvas package is installed, as here. vega exports it at run time and uses a width
 * function put in its place (vl-convert does the same), but its type declarations omit it.
 */
const textMetrics = (
  vega as unknown as {
    textMetrics: {
      width: (item: { fontSize?: number; fontWeight?: unknown }, text: string) => number;
    };
  }
).textMetrics;

/**
 * Lays the chart out with text widths close to the font it names (DejaVu Sans, or Verdana:
 * about 0.56 em a lower-case letter, 0.64 a digit, 0.67 a capital; bold about 10% more)
 * instead of vega's 0.8 em, which cut legend labels short and left wide gaps. Slightly
 * generous, so narrower fallback fonts never overlap.
 */
async function withTextWidths(render: () => Promise<string>): Promise<string> {
  const previous = textMetrics.width;
  textMetrics.width = (item, text) => {
    const size = item.fontSize ?? 11;
    const bold = item.fontWeight === "bold" || Number(item.fontWeight) >= 600;
    return [...String(text ?? "")].length * size * (bold ? 0.68 : 0.62);
  };
  try {
    return await render();
  } finally {
    textMetrics.width = previous;
  }
}

/** The SVG as a PNG at `zoom` (2: sharp on high-density screens), text set in DejaVu Sans where installed. */
export function renderPng(svg: string, zoom = 2): Uint8Array {
  const resvg = new Resvg(svg, {
    fitTo: { mode: "zoom", value: zoom },
    background: "white",
    font: {
      loadSystemFonts: true,
      defaultFontFamily: "DejaVu Sans",
      sansSerifFamily: "DejaVu Sans",
    },
  });
  return resvg.render().asPng();
}

function formatWait(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toPrecision(3)} s`;
  return `${(ms / 60_000).toPrecision(3)} min`;
}
