/**
 * Job ids as stored in Redis. An id appears twice per waiting job (the record's hash field
 * and the waiting list), so the canonical lowercase UUIDs core generates are stored as
 * "~" + 22 base64url characters (23 bytes instead of 36): about 30 bytes saved per job.
 *
 * Encoding (total and reversible, text only):
 * - a lowercase canonical UUID            → "~" + base64url(16 bytes)
 * - any other id that starts with "~"     → "~" + id   (so it starts with "~~")
 * - any other id                          → unchanged
 * base64url never produces "~", so "~~" at the start always means an escaped id.
 */
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Value of each lowercase hex digit by char code, -1 for any other UTF-16 unit. */
const HEX_VALUE = new Int8Array(65_536).fill(-1);
for (let i = 0; i < 16; i++) HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
const BASE64URL_CODES = Buffer.from(BASE64URL, "latin1");
/** Where a canonical UUID's 32 hex digits sit in its 36 characters. */
const HEX_AT: readonly number[] = [
  0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 26, 27, 28, 29, 30,
  31, 32, 33, 34, 35,
];
/** Scratch for one compact id: "~" and 22 base64url characters. */
const compactText = Buffer.alloc(23);

/** The hex digit's value at `i` of `id` (a position below its length); negative for anything else. */
const hexAt = (id: string, i: number): number => HEX_VALUE[id.charCodeAt(i)] as number;

/**
 * Write "~" + base64url of a lowercase canonical UUID's 16 bytes (23 bytes) into `out` at
 * `at`; false (and bytes written there that mean nothing) when `id` is not one.
 * Hand-rolled because it runs for every job published: three hex digits (12 bits) are
 * exactly two base64 characters, so it goes from digits to characters with no bytes in
 * between, checking every digit once at the end. It writes straight into put's packed
 * batch (put-batch.ts) or into a scratch buffer read out as one flat string.
 */
export function writeCompactUuid(id: string, out: Buffer, at: number): boolean {
  if (id.length !== 36) return false;
  if (id.charCodeAt(8) !== 45 || id.charCodeAt(13) !== 45) return false; // "-"
  if (id.charCodeAt(18) !== 45 || id.charCodeAt(23) !== 45) return false;
  let bad = 0;
  let o = at;
  out[o++] = 126; // "~"
  for (let j = 0; j < 30; j += 3) {
    const a = hexAt(id, HEX_AT[j] as number);
    const b = hexAt(id, HEX_AT[j + 1] as number);
    const c = hexAt(id, HEX_AT[j + 2] as number);
    bad |= a | b | c;
    out[o++] = BASE64URL_CODES[(a << 2) | (b >> 2)] as number;
    out[o++] = BASE64URL_CODES[((b & 3) << 4) | c] as number;
  }
  // the last two digits (8 bits): six, then two padded with four zero bits
  const d = hexAt(id, 34);
  const e = hexAt(id, 35);
  bad |= d | e;
  out[o++] = BASE64URL_CODES[(d << 2) | (e >> 2)] as number;
  out[o] = BASE64URL_CODES[(e & 3) << 4] as number;
  return bad >= 0;
}

export function encodeId(id: string): string {
  if (writeCompactUuid(id, compactText, 0)) return compactText.toString("latin1", 0, 23);
  return id.startsWith("~") ? `~${id}` : id;
}

/** Value of each base64url character by char code, -1 for anything else. */
const BASE64URL_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) BASE64URL_VALUE[BASE64URL.charCodeAt(i)] = i;
const HEX_CODES = new TextEncoder().encode("0123456789abcdef");
/** Scratch for one canonical UUID's text (36 one-byte characters). */
const uuidText = Buffer.alloc(36, 45); // "-" where the dashes go

/**
 * The canonical UUID a "~" + 22 base64url id stands for, or undefined when `stored` is
 * not one encodeId wrote. Hand-rolled (it runs for every job reserved): one string
 * allocated, no Buffer decode and slices.
 */
function expandUuid(stored: string): string | undefined {
  if (stored.length !== 23) return undefined;
  let at = 0;
  for (let i = 1; i < 23; i += 4) {
    const a = BASE64URL_VALUE[stored.charCodeAt(i)] ?? -1;
    const b = BASE64URL_VALUE[stored.charCodeAt(i + 1)] ?? -1;
    if (i === 21) {
      // the last two characters carry the 16th byte; the low 4 bits must be zero
      if (a < 0 || b < 0 || (b & 15) !== 0) return undefined;
      at = putHex(at, (a << 2) | (b >> 4));
      break;
    }
    const c = BASE64URL_VALUE[stored.charCodeAt(i + 2)] ?? -1;
    const d = BASE64URL_VALUE[stored.charCodeAt(i + 3)] ?? -1;
    if ((a | b | c | d) < 0) return undefined;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    at = putHex(at, n >> 16);
    at = putHex(at, (n >> 8) & 255);
    at = putHex(at, n & 255);
  }
  return uuidText.toString("latin1", 0, 36);
}

/** Two hex digits of `byte` into uuidText at `at` (skipping the dashes); the next position. */
function putHex(at: number, byte: number): number {
  const i = at === 8 || at === 13 || at === 18 || at === 23 ? at + 1 : at;
  uuidText[i] = HEX_CODES[byte >> 4] as number;
  uuidText[i + 1] = HEX_CODES[byte & 15] as number;
  return i + 2;
}

export function decodeId(stored: string): string {
  if (!stored.startsWith("~")) return stored;
  if (stored.startsWith("~~")) return stored.slice(1);
  // not written by encodeId: hand it back untouched
  return expandUuid(stored) ?? stored;
}
