const integer = new Intl.NumberFormat("en", { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });

export const fmtInt = (n: number) => integer.format(n);
export const fmtNum = (n: number) => (n >= 100 ? integer.format(n) : decimal.format(n));

/** A duration for people: 0.4 ms, 12 ms, 1.2 s, 3.5 min, 2.1 h, 3.0 d. */
export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  if (ms < 86_400_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  return `${(ms / 86_400_000).toFixed(1)} d`;
}

/** A bound of a histogram bucket: 1 ms, 500 ms, 2 s, 5 min. */
export function fmtBound(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${ms / 1_000} s`;
  if (ms < 3_600_000) return `${ms / 60_000} min`;
  if (ms < 86_400_000) return `${ms / 3_600_000} h`;
  return `${ms / 86_400_000} d`;
}

/** An instant relative to now: "in 3 s", "5 min ago". */
export function fmtAgo(at: number, now = Date.now()): string {
  const ms = now - at;
  const abs = Math.abs(ms);
  let text: string;
  if (abs < 1_000) return "now";
  if (abs < 60_000) text = `${Math.round(abs / 1_000)} s`;
  else if (abs < 3_600_000) text = `${Math.round(abs / 60_000)} min`;
  else if (abs < 86_400_000) text = `${Math.round(abs / 3_600_000)} h`;
  else text = `${Math.round(abs / 86_400_000)} d`;
  return ms >= 0 ? `${text} ago` : `in ${text}`;
}

/** Full local time with milliseconds, for titles and detail. */
export function fmtTime(at: number): string {
  const d = new Date(at);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export const todayUtc = () => new Date().toISOString().slice(0, 10);

/** A short id for tables: long ids keep their start and end. */
export function shortId(id: string): string {
  return id.length <= 14 ? id : `${id.slice(0, 8)}…${id.slice(-4)}`;
}
