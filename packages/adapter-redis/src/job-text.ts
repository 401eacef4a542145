/**
 * The text part of a stored job body (see lua/_common.lua, JOB RECORDS):
 *
 *   "<task length>:<appData length, or - for none>:<task><appData><payload>"
 *
 * and, for a job with a trace context (NewJob.traceContext), the same behind a head:
 *
 *   "~<trace context length>:<trace context><task length>:…"
 *
 * Lengths count UTF-16 code units, so Node slices the text it gets back without decoding
 * UTF-8 by hand. Scripts never read it: they store it at put and hand it back at reserve,
 * get and list, which is what keeps a general-purpose decoder off the Lua hot path.
 *
 * The head goes in front, not behind, so a worker of a build that predates it finds no
 * task length where it expects one and dead-letters the job as malformed, naming the
 * text, instead of running it with a payload it misreads. Jobs without a trace context
 * (any client without telemetry) keep the old text, byte for byte.
 */

export interface JobText {
  task: string;
  payload: string;
  appData?: string;
  traceContext?: string;
}

/** The first character of a text with a trace context head. */
const TRACE_HEAD = 126; // "~"

export function encodeJobText(
  task: string,
  payload: string,
  appData: string | undefined,
  traceContext?: string,
): string {
  const app = appData === undefined ? "-" : String(appData.length);
  const body = `${task.length}:${app}:${task}${appData ?? ""}${payload}`;
  return traceContext === undefined ? body : `~${traceContext.length}:${traceContext}${body}`;
}

/** The parts of a job text, or undefined when it is not one tasklane wrote. */
export function parseJobText(text: string): JobText | undefined {
  if (text.charCodeAt(0) !== TRACE_HEAD) return parseBody(text, 0);
  const colon = text.indexOf(":", 1);
  const length = colon > 0 ? digits(text, 1, colon) : -1;
  if (length < 0 || colon + 1 + length > text.length) return undefined;
  const out = parseBody(text, colon + 1 + length);
  if (out !== undefined) out.traceContext = text.slice(colon + 1, colon + 1 + length);
  return out;
}

/** The task, appData and payload of the text from `from` on. */
function parseBody(text: string, from: number): JobText | undefined {
  const a = text.indexOf(":", from);
  const b = a > from ? text.indexOf(":", a + 1) : -1;
  if (b < 0) return undefined;
  const taskLength = digits(text, from, a);
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
