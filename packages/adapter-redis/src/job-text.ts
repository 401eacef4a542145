/**
 * The text part of a stored job body (see lua/_common.lua, JOB RECORDS):
 *
 *   "<task length>:<appData length, or - for none>:<task><appData><payload>"
 *
 * Lengths count UTF-16 code units, so Node slices the text it gets back without decoding
 * UTF-8 by hand. Scripts never read it: they store it at put and hand it back at reserve,
 * get and list, which is what keeps a general-purpose decoder off the Lua hot path.
 */

export interface JobText {
  task: string;
  payload: string;
  appData?: string;
}

export function encodeJobText(task: string, payload: string, appData: string | undefined): string {
  const app = appData === undefined ? "-" : String(appData.length);
  return `${task.length}:${app}:${task}${appData ?? ""}${payload}`;
}

/** The parts of a job text, or undefined when it is not one tasklane wrote. */
export function parseJobText(text: string): JobText | undefined {
  const a = text.indexOf(":");
  const b = a > 0 ? text.indexOf(":", a + 1) : -1;
  if (b < 0) return undefined;
  const taskLength = digits(text, 0, a);
  const app = text.slice(a + 1, b);
  const appLength = app === "-" ? -1 : digits(text, a + 1, b);
  if (taskLength < 0 || (app !== "-" && appLength < 0)) return undefined;
  const taskEnd = b + 1 + taskLength;
  const appEnd = taskEnd + Math.max(0, appLength);
  if (appEnd > text.length) return undefined;
  const out: JobText = { task: text.slice(b + 1, taskEnd), payload: text.slice(appEnd) };
  if (appLength >= 0) out.appData = text.slice(taskEnd, appEnd);
  return out;
}

/** The decimal number in text[from, to), or -1 when that is not one (or empty). */
function digits(text: string, from: number, to: number): number {
  if (to <= from || to - from > 15) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}
