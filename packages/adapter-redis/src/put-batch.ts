/**
 * put's packed batch (layouts "p" and "r", see lua/put.lua): every job of a call in one
 * script argument; per job ">I2" the encoded id's length in bytes, the id, ">I4" the job
 * text's length in bytes, the text (see job-text.ts). Layout "r" puts the by-ref record's
 * head before each text (byte 7, ">I2" the job's index from 1, the call's 8-byte ref), so
 * each text is the record as redis-server stores it (JOB RECORDS in lua/_common.lua).
 *
 * Why one argument: sent as two arguments per job, each id and text was a string of its
 * own, ioredis measured every argument (Buffer.byteLength) and joined ~10,000 pieces into
 * one string that V8 then flattened and encoded again on the socket, and redis-server
 * parsed 2,000 bulk strings. Packed, ids and texts are written once, as UTF-8, straight
 * into one buffer, and the script splits it with one struct.unpack per job.
 */
import { randomFillSync } from "node:crypto";
import type { NewJob } from "@tasklane/core/adapter";
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

/** The first byte of a by-ref record (BY_REF in lua/_common.lua). */
const BY_REF = 7;
/** A by-ref record's head: the kind, the index, the call ref. */
const REF_HEAD_BYTES = 11;
/** The most jobs a by-ref call can index (">I2"). */
export const MAX_BY_REF_JOBS = 65_535;

/** The bytes a job may need at most (UTF-8 takes at most 3 bytes per UTF-16 unit). */
function worstCase(job: NewJob): number {
  const textUnits =
    48 +
    job.task.length +
    (job.appData?.length ?? 0) +
    (job.traceContext?.length ?? 0) +
    job.payload.length;
  return 6 + REF_HEAD_BYTES + 3 * (job.id.length + 1) + 3 * textUnits;
}

/**
 * A new call ref: 8 random bytes (from the same CSPRNG as job ids), so no two calls'
 * records point to one header; put checks that none is stored already.
 */
export function newCallRef(): Buffer {
  return randomFillSync(Buffer.allocUnsafe(8));
}

/**
 * The jobs packed for layout "p", or for layout "r" with `ref` (at most MAX_BY_REF_JOBS
 * jobs). A buffer of the call's own (ioredis may hold it until it can write).
 */
export function packJobs(jobs: readonly NewJob[], ref?: Buffer): Buffer {
  const length = packInto(jobs, ref ?? NO_REF);
  const out = packed;
  packed = scratch;
  // The shared scratch is copied out (ioredis may hold the argument until the connection
  // can write it); a buffer of this call's own is handed over as is.
  return out === scratch ? Buffer.from(out.subarray(0, length)) : out.subarray(0, length);
}

/** Where packInto left its jobs: the scratch, or a buffer of the call's own. */
let packed = scratch;
/** packInto's ref for layout "p" (none; one type for both, so V8 compiles one loop). */
const NO_REF = Buffer.alloc(0);

/**
 * Pack the jobs into `packed`; returns their length in bytes. The loop is a function of
 * its own that ends with it: V8 compiles a long loop on the stack (OSR) while the first
 * call still runs, before any code after the loop has run. Code after the loop then had
 * no type feedback, and the compiled loop, which later calls enter again, deoptimized at
 * it on every call (`--trace-deopt`: "Insufficient type feedback", once per publishMany).
 */
function packInto(jobs: readonly NewJob[], ref: Buffer): number {
  let o = 0;
  let prefixTask: string | undefined;
  let prefixTrace: string | undefined;
  // the ref (if any) and the text's head, written as one piece after the index
  let prefix = new Uint8Array(0);
  const byRef = ref.length > 0;
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
    if (byRef) {
      out[t] = BY_REF;
      out[t + 1] = (k + 1) >> 8;
      out[t + 2] = (k + 1) & 255;
      t += 3;
    }
    if (job.appData === undefined) {
      // The ref and the text's head ("<task length>:-:<task>", behind the trace context's
      // when there is one) are the same for every job of a task (and publish call).
      if (job.task !== prefixTask || job.traceContext !== prefixTrace) {
        prefixTask = job.task;
        prefixTrace = job.traceContext;
        prefix = Buffer.concat([
          ref,
          Buffer.from(encodeJobText(job.task, "", undefined, job.traceContext), "utf8"),
        ]);
      }
      out.set(prefix, t);
      t += prefix.length;
    } else {
      out.set(ref, t);
      t += ref.length;
      t += out.write(encodeJobText(job.task, "", job.appData, job.traceContext), t, "utf8");
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
