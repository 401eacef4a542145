/**
 * put's packed batch (layout "p", see lua/put.lua): every job of a call in one script
 * argument; per job ">I2" the encoded id's length in bytes, the id, ">I4" the job text's
 * length in bytes, the text (see job-text.ts).
 *
 * Why one argument: sent as two arguments per job, each id and text was a string of its
 * own, ioredis measured every argument (Buffer.byteLength) and joined ~10,000 pieces into
 * one string that V8 then flattened and encoded again on the socket, and redis-server
 * parsed 2,000 bulk strings. Packed, ids and texts are written once, as UTF-8, straight
 * into one buffer, and the script splits it with one struct.unpack per job.
 */
import type { NewJob } from "@tasklane/core";
import { encodeId, writeCompactUuid } from "./id-codec.ts";
import { encodeJobText } from "./job-text.ts";

/** Reused by every call whose batch fits in SCRATCH_MAX_BYTES; copied out each time. */
let scratch = Buffer.allocUnsafe(64 * 1024);
/**
 * The most the shared scratch grows to. A larger batch (big payloads) is packed into a
 * buffer of its own that is handed over as is and freed with the call, so one large
 * publishMany does not pin its size in memory for the life of the process.
 */
const SCRATCH_MAX_BYTES = 1024 * 1024;

/** The bytes a job may need at most (UTF-8 takes at most 3 bytes per UTF-16 unit). */
function worstCase(job: NewJob): number {
  const textUnits = 24 + job.task.length + (job.appData?.length ?? 0) + job.payload.length;
  return 6 + 3 * (job.id.length + 1) + 3 * textUnits;
}

export function packJobs(jobs: readonly NewJob[]): Buffer {
  const length = packInto(jobs);
  const out = packed;
  packed = scratch;
  // The shared scratch is copied out (ioredis may hold the argument until the connection
  // can write it); a buffer of this call's own is handed over as is.
  return out === scratch ? Buffer.from(out.subarray(0, length)) : out.subarray(0, length);
}

/** Where packInto left its jobs: the scratch, or a buffer of the call's own. */
let packed = scratch;

/**
 * Pack the jobs into `packed`; returns their length in bytes. The loop is a function of
 * its own that ends with it: V8 compiles a long loop on the stack (OSR) while the first
 * call still runs, before any code after the loop has run. Code after the loop then had
 * no type feedback, and the compiled loop, which later calls enter again, deoptimized at
 * it on every call (`--trace-deopt`: "Insufficient type feedback", once per publishMany).
 */
function packInto(jobs: readonly NewJob[]): number {
  let o = 0;
  let prefixTask: string | undefined;
  let prefix = new Uint8Array(0);
  let out = scratch;
  // indexed, not for...of: until V8 compiles it, the iterator protocol costs calls per job
  for (let k = 0; k < jobs.length; k++) {
    const job = jobs[k] as NewJob;
    const need = o + worstCase(job);
    if (need > out.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, 2 * out.length));
      out.copy(grown, 0, 0, o);
      out = grown;
      if (grown.length <= SCRATCH_MAX_BYTES) scratch = grown;
    }
    const idLength = writeCompactUuid(job.id, out, o + 2)
      ? 23
      : out.write(encodeId(job.id), o + 2, "utf8");
    out[o] = idLength >> 8;
    out[o + 1] = idLength & 255;
    o += 2 + idLength;
    const start = o + 4;
    let t = start;
    if (job.appData === undefined) {
      // The text's head ("<task length>:-:<task>") is the same for every job of a task.
      if (job.task !== prefixTask) {
        prefixTask = job.task;
        prefix = Buffer.from(encodeJobText(job.task, "", undefined), "utf8");
      }
      for (let i = 0; i < prefix.length; i++) out[t++] = prefix[i] as number;
    } else {
      t += out.write(encodeJobText(job.task, "", job.appData), t, "utf8");
    }
    t += out.write(job.payload, t, "utf8");
    const textLength = t - start;
    out[o] = textLength >>> 24;
    out[o + 1] = (textLength >> 16) & 255;
    out[o + 2] = (textLength >> 8) & 255;
    out[o + 3] = textLength & 255;
    o = t;
  }
  packed = out;
  return o;
}
