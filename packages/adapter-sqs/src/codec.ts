/**
 * How a tasklane job is laid out in an SQS message, and back.
 *
 * The body is the job's encoded payload, verbatim, so a foreign consumer (or the SQS
 * console) sees plain JSON. Everything else travels in String message attributes (SQS
 * allows at most 10 per message; we use at most 8, and 1 for most jobs, since every
 * attribute costs parsing, hashing and bytes on both ends):
 *
 *   tl               JSON {v: 1, id, task, p: priority, pub: publishedAt, run?: runAt, base?, stl?,
 *                    g?: group}
 *   tl-app           appData (JSON text), when present
 *   tl-trace         the trace context (NewJob.traceContext), when present; every copy of
 *                    the message (retry, hand-back, dead letter) carries it on
 *   tl-enc           comma list of fields escaped below ("body", "tl", "tl-app", ...), when any
 *   tl-error-name, tl-error-message, tl-error-stack, tl-error-reason   (dead letters only)
 *
 * `base` is the number of attempts already counted before this SQS message was sent (a
 * nack or an uncounted release sends a fresh copy), so attempt = base + the copy's
 * ApproximateReceiveCount. `stl` carries the stall count across copies.
 *
 * SQS refuses characters outside #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD |
 * #x10000-#x10FFFF in bodies and attribute values. A field holding any of them is escaped
 * reversibly: `%` becomes `%25` and each offending UTF-16 code unit `%uXXXX`; its name is
 * listed in `tl-enc`. Only fields that need it are escaped, so ordinary payloads travel
 * untouched. Lone surrogates are code units, so any JS string round-trips exactly.
 */
import type { MessageAttributeValue } from "@aws-sdk/client-sqs";

/** SQS's largest message: body + every attribute's name, type and value, in bytes. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

export const ATTR = {
  job: "tl",
  app: "tl-app",
  trace: "tl-trace",
  enc: "tl-enc",
  errorName: "tl-error-name",
  errorMessage: "tl-error-message",
  errorStack: "tl-error-stack",
  errorReason: "tl-error-reason",
} as const;

/** The job fields kept in the `tl` attribute besides id and task. */
export interface JobMeta {
  /** Layout version. */
  v: 1;
  /** Priority. */
  p: number;
  /** publishedAt, epoch ms. */
  pub: number;
  /** runAt, epoch ms, when the job was delayed. */
  run?: number;
  /** Attempts counted before this SQS message was sent. */
  base?: number;
  /** Stalls (lease expiries) counted before this SQS message was sent. */
  stl?: number;
  /**
   * The job's group (publish's `group`), sent as the MessageGroupId: kept here too, since a
   * receive may not return a standard queue's MessageGroupId, and every copy must carry it.
   */
  g?: string;
}

export type Attributes = Record<string, MessageAttributeValue>;

// The allowed set as SQS documents it, and a stricter one (Basic Multilingual Plane only)
// for servers that refuse astral characters (fauxqs 2.x does).
const BAD_SQS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const BAD_SQS_G = /%|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const BAD_BMP = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/;
const BAD_BMP_G = /%|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/g;
const ESCAPED_G = /%(?:25|u([0-9A-F]{4}))/g;

export interface Escaper {
  /** The text with offending characters escaped, or undefined when it needs nothing. */
  escape(text: string): string | undefined;
}

/** An escaper for the SQS character set; `escapeAstral` also escapes U+10000 and up. */
export function createEscaper(escapeAstral: boolean): Escaper {
  const bad = escapeAstral ? BAD_BMP : BAD_SQS;
  const badG = escapeAstral ? BAD_BMP_G : BAD_SQS_G;
  const replace = (c: string): string => {
    if (c === "%") return "%25";
    let out = "";
    for (let i = 0; i < c.length; i++) {
      out += `%u${c.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")}`;
    }
    return out;
  };
  return {
    escape: (text) => (bad.test(text) ? text.replace(badG, replace) : undefined),
  };
}

/** Undo {@link Escaper.escape}. */
export function unescapeText(text: string): string {
  return text.replace(ESCAPED_G, (_m, hex: string | undefined) =>
    hex === undefined ? "%" : String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

const utf8 = new TextEncoder();

/** UTF-8 bytes of a string (ASCII fast path). */
export function byteLength(text: string): number {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) return utf8.encode(text).length;
  }
  return text.length;
}

/** Size SQS counts for a message: body + each attribute's name, data type and value. */
export function messageBytes(body: string, attributes: Attributes): number {
  let size = byteLength(body);
  for (const name in attributes) {
    const a = attributes[name] as MessageAttributeValue;
    size += name.length + (a.DataType?.length ?? 0);
    if (a.StringValue !== undefined) size += byteLength(a.StringValue);
    if (a.BinaryValue !== undefined) size += a.BinaryValue.length;
  }
  return size;
}

/** A message ready for SendMessage(Batch). */
export interface OutgoingMessage {
  body: string;
  attributes: Attributes;
  /** {@link messageBytes} of it. */
  bytes: number;
}

/** Everything needed to write a job as a message. Values are raw (unescaped). */
export interface JobFields {
  id: string;
  task: string;
  payload: string;
  appData?: string;
  traceContext?: string;
  meta: JobMeta;
}

const str = (value: string): MessageAttributeValue => ({ DataType: "String", StringValue: value });

/**
 * Lay a job out as body + attributes, escaping what SQS would refuse. `extra` attributes
 * (dead-letter errors) are added as given: callers escape them with the same escaper.
 */
export function encodeJob(escaper: Escaper, job: JobFields, extra?: Attributes): OutgoingMessage {
  const encoded: string[] = [];
  const field = (name: string, value: string): string => {
    const e = escaper.escape(value);
    if (e === undefined) return value;
    encoded.push(name);
    return e;
  };
  const body = field("body", job.payload);
  const attributes: Attributes = {
    [ATTR.job]: str(field(ATTR.job, JSON.stringify({ id: job.id, task: job.task, ...job.meta }))),
  };
  if (job.appData !== undefined) attributes[ATTR.app] = str(field(ATTR.app, job.appData));
  if (job.traceContext !== undefined && job.traceContext !== "") {
    attributes[ATTR.trace] = str(field(ATTR.trace, job.traceContext));
  }
  if (extra) {
    for (const [name, value] of Object.entries(extra)) {
      if (value.StringValue !== undefined) attributes[name] = str(field(name, value.StringValue));
    }
  }
  if (encoded.length > 0) attributes[ATTR.enc] = str(encoded.join(","));
  return { body, attributes, bytes: messageBytes(body, attributes) };
}

/** A job read back from a message; `malformed` says why it could not be, if so. */
export interface DecodedJob {
  id: string;
  task: string;
  payload: string;
  appData?: string;
  traceContext?: string;
  meta: JobMeta;
  malformed?: string;
}

/**
 * Read a job from a received message. Never throws: a message tasklane did not write
 * (or one damaged on the way) comes back with `malformed` set and best-effort fields.
 */
export function decodeJob(
  messageId: string,
  body: string | undefined,
  attributes: Attributes | undefined,
  sentAt: number,
): DecodedJob {
  const attrs = attributes ?? {};
  const encAttr = attrs[ATTR.enc]?.StringValue;
  const enc = new Set(encAttr ? encAttr.split(",") : []);
  const read = (name: string, raw: string | undefined): string | undefined =>
    raw !== undefined && enc.has(name) ? unescapeText(raw) : raw;
  const payload = read("body", body ?? "") ?? "";
  const appData = read(ATTR.app, attrs[ATTR.app]?.StringValue);
  const fallback: JobMeta = { v: 1, p: 0, pub: sentAt };
  const out: DecodedJob = { id: messageId, task: "", payload, meta: fallback };
  if (appData !== undefined) out.appData = appData;
  const traceContext = read(ATTR.trace, attrs[ATTR.trace]?.StringValue);
  if (traceContext !== undefined) out.traceContext = traceContext;
  const text = read(ATTR.job, attrs[ATTR.job]?.StringValue);
  if (text === undefined) {
    out.malformed = `SQS message ${messageId} has no "${ATTR.job}" attribute: not written by tasklane`;
    return out;
  }
  const parsed = parseJob(text);
  if (!parsed) {
    out.malformed = `SQS message ${messageId} has an invalid "${ATTR.job}" attribute`;
    return out;
  }
  out.id = parsed.id;
  out.task = parsed.task;
  out.meta = parsed.meta;
  return out;
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);

function parseJob(text: string): { id: string; task: string; meta: JobMeta } | undefined {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (m === null || typeof m !== "object") return undefined;
  const o = m as Record<string, unknown>;
  if (o.v !== 1 || !isInt(o.p) || !isInt(o.pub)) return undefined;
  if (typeof o.id !== "string" || typeof o.task !== "string") return undefined;
  const meta: JobMeta = { v: 1, p: o.p, pub: o.pub };
  if (o.run !== undefined) {
    if (!isInt(o.run)) return undefined;
    meta.run = o.run;
  }
  if (o.base !== undefined) {
    if (!isInt(o.base) || o.base < 0) return undefined;
    meta.base = o.base;
  }
  if (o.stl !== undefined) {
    if (!isInt(o.stl) || o.stl < 0) return undefined;
    meta.stl = o.stl;
  }
  if (o.g !== undefined) {
    if (typeof o.g !== "string" || o.g.length === 0) return undefined;
    meta.g = o.g;
  }
  return { id: o.id, task: o.task, meta };
}
