import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { fmtBound, fmtInt } from "./format.ts";
import type { Bucket } from "./types.ts";

/** The theme's colours, read from the CSS variables (light or dark by prefers-color-scheme). */
function palette() {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return {
    text: v("--muted"),
    grid: v("--grid"),
    accent: v("--accent"),
    ok: v("--ok"),
    bad: v("--bad"),
    font: `12px ${v("--font") || "system-ui"}`,
  };
}

/** Bumps when the colour scheme changes, so charts are redrawn in the new colours. */
function useScheme(): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    const query = matchMedia("(prefers-color-scheme: dark)");
    const change = () => setN((x) => x + 1);
    query.addEventListener("change", change);
    return () => query.removeEventListener("change", change);
  }, []);
  return n;
}

/**
 * A uPlot chart in a box of fixed height: the box is laid out before the chart exists,
 * so drawing it (or redrawing on new data) never moves the page.
 */
function UPlot(props: {
  height: number;
  options: (
    p: ReturnType<typeof palette>,
    width: number,
  ) => Omit<uPlot.Options, "width" | "height">;
  data: uPlot.AlignedData;
  label: string;
  rebuildKey: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const scheme = useScheme();
  const { options, data, height } = props;
  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const width = Math.max(element.clientWidth, 200);
    const plot = new uPlot({ ...options(palette(), width), width, height }, data, element);
    chart.current = plot;
    const observer = new ResizeObserver(() => {
      const w = Math.max(element.clientWidth, 200);
      if (w !== plot.width) plot.setSize({ width: w, height });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
      chart.current = null;
    };
  }, [scheme, props.rebuildKey, height]);

  useEffect(() => {
    chart.current?.setData(data);
  }, [data]);

  return (
    <div
      class="chart"
      ref={box}
      role="img"
      aria-label={props.label}
      style={{ height: `${height + 34}px` }}
    />
  );
}

/** Empty ranges between buckets that hold samples, as zero bars: the x axis has no gaps. */
export function contiguous(buckets: Bucket[]): Bucket[] {
  const out: Bucket[] = [];
  for (const b of buckets) {
    const last = out[out.length - 1];
    if (last !== undefined && last.upperMs !== null && last.upperMs < b.lowerMs) {
      out.push({ lowerMs: last.upperMs, upperMs: b.lowerMs, count: 0 });
    }
    out.push(b);
  }
  return out;
}

export const bucketLabel = (b: Bucket) =>
  b.upperMs === null ? `≥ ${fmtBound(b.lowerMs)}` : `${fmtBound(b.lowerMs)}–${fmtBound(b.upperMs)}`;

/** An axis label: the range with its unit once ("20–50 ms", "500 ms–1 s"). */
function shortLabel(b: Bucket): string {
  if (b.upperMs === null) return `≥ ${fmtBound(b.lowerMs)}`;
  const lower = fmtBound(b.lowerMs);
  const upper = fmtBound(b.upperMs);
  const unit = upper.slice(upper.indexOf(" "));
  return lower.endsWith(unit) ? `${lower.slice(0, -unit.length)}–${upper}` : `${lower}–${upper}`;
}

/** A histogram of durations (wait or run), one bar per bucket. */
export function Histogram(props: { buckets: Bucket[]; title: string; color?: "accent" | "ok" }) {
  const buckets = contiguous(props.buckets);
  const labels = buckets.map(bucketLabel);
  const short = buckets.map(shortLabel);
  const xs = buckets.map((_, i) => i);
  const total = buckets.reduce((n, b) => n + b.count, 0);
  const label = `${props.title}: ${
    total === 0
      ? "no samples"
      : buckets
          .filter((b) => b.count > 0)
          .map((b) => `${fmtInt(b.count)} in ${bucketLabel(b)}`)
          .join(", ")
  }`;
  if (total === 0) {
    return (
      <div class="chart chart-empty" style={{ height: "194px" }}>
        No samples for this day.
      </div>
    );
  }
  return (
    <UPlot
      height={160}
      label={label}
      rebuildKey={labels.join("|")}
      data={[xs, buckets.map((b) => b.count)]}
      options={(p) => ({
        legend: { show: true, live: true },
        cursor: { points: { show: false }, drag: { x: false, y: false } },
        scales: {
          x: { time: false, range: [-0.5, buckets.length - 0.5] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
        },
        axes: [
          {
            stroke: p.text,
            font: p.font,
            grid: { show: false },
            ticks: { show: false },
            // As many labels as fit (about 76 px each): every k-th bar.
            splits: (u) => {
              const fit = Math.max(1, Math.floor(u.bbox.width / devicePixelRatio / 76));
              const k = Math.ceil(buckets.length / fit);
              return xs.filter((i) => i % k === 0);
            },
            values: (_u, splits) => splits.map((i) => short[i] ?? ""),
          },
          {
            stroke: p.text,
            font: p.font,
            grid: { stroke: p.grid, width: 1 },
            ticks: { show: false },
            size: 48,
          },
        ],
        series: [
          { label: "range", value: (_u, i) => (i === null ? "–" : (labels[i] ?? "")) },
          {
            label: "jobs",
            fill: props.color === "ok" ? p.ok : p.accent,
            stroke: props.color === "ok" ? p.ok : p.accent,
            width: 0,
            paths: uPlot.paths.bars!({ size: [0.8, 56], gap: 1 }),
            points: { show: false },
            value: (_u, v) => (v === null ? "–" : fmtInt(v)),
          },
        ],
      })}
    />
  );
}

/** 14:05:09, local time, for an epoch second. */
const clock = (second: number) => new Date(second * 1000).toLocaleTimeString("en-GB");

/** Events per second over the last minutes, from the live event stream. */
export function RateChart(props: {
  seconds: number[];
  series: Array<Array<number | null>>;
  names: readonly string[];
}) {
  const last = props.series.map((s) => s[s.length - 1] ?? 0);
  const totals = props.series.map((s) => s.reduce<number>((n, v) => n + (v ?? 0), 0));
  const seen = props.series[0]?.filter((v) => v !== null).length ?? 0;
  const label = `Events per second over the last ${props.seconds.length + 1} s (${seen} s followed): ${props.names.map((n, i) => `${n} ${totals[i]}`).join(", ")}; in the last full second: ${props.names.map((n, i) => `${n} ${last[i]}`).join(", ")}`;
  const colors = (p: ReturnType<typeof palette>) => [p.accent, p.ok, p.bad];
  return (
    <UPlot
      height={150}
      label={label}
      rebuildKey={props.names.join()}
      data={[props.seconds, ...props.series]}
      options={(p) => ({
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        scales: {
          x: { time: true },
          y: { range: (_u, _min, max) => [0, Math.max(5, Math.ceil(max * 1.15))] },
        },
        axes: [
          {
            stroke: p.text,
            font: p.font,
            grid: { stroke: p.grid, width: 1 },
            ticks: { show: false },
            space: 80,
            values: (_u, splits) => splits.map((t) => clock(t)),
          },
          {
            stroke: p.text,
            font: p.font,
            grid: { stroke: p.grid, width: 1 },
            ticks: { show: false },
            size: 48,
          },
        ],
        series: [
          { value: (_u, t) => (t === null ? "–" : clock(t)) },
          ...props.names.map((name, i) => ({
            label: `${name}/s`,
            stroke: colors(p)[i] ?? p.accent,
            width: 1.5,
            // A line needs two seconds: until then, the one second is a dot.
            points: {
              show: (u: uPlot) => (u.data[1] ?? []).filter((v) => v !== null).length < 3,
              size: 5,
            },
            value: (_u: uPlot, v: number | null) => (v === null ? "–" : fmtInt(v)),
          })),
        ],
      })}
    />
  );
}
