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
/** Value of each lowercase hex digit by char code, -1 for anything else. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
const uuidBytes = new Uint8Array(16);

/**
 * "~" + base64url of a lowercase canonical UUID's 16 bytes, or undefined when `id` is not
 * one. Hand-rolled because it runs for every job published: five times faster than a
 * regex test, a hex decode and a base64url encode through Buffer.
 */
function compactUuid(id: string): string | undefined {
  if (id.length !== 36) return undefined;
  let k = 0;
  for (let i = 0; i < 36; i += 2) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (id.charCodeAt(i) !== 45) return undefined; // "-"
      i++;
    }
    const hi = HEX_VALUE[id.charCodeAt(i)] ?? -1;
    const lo = HEX_VALUE[id.charCodeAt(i + 1)] ?? -1;
    if (hi < 0 || lo < 0) return undefined;
    uuidBytes[k++] = (hi << 4) | lo;
  }
  let out = "~";
  for (let i = 0; i < 15; i += 3) {
    const n = ((uuidBytes[i] as number) << 16) | ((uuidBytes[i + 1] as number) << 8);
    const m = n | (uuidBytes[i + 2] as number);
    out +=
      (BASE64URL[m >> 18] as string) +
      BASE64URL[(m >> 12) & 63] +
      BASE64URL[(m >> 6) & 63] +
      BASE64URL[m & 63];
  }
  const last = uuidBytes[15] as number;
  return out + BASE64URL[last >> 2] + BASE64URL[(last & 3) << 4];
}

export function encodeId(id: string): string {
  const compact = compactUuid(id);
  if (compact !== undefined) return compact;
  return id.startsWith("~") ? `~${id}` : id;
}

export function decodeId(stored: string): string {
  if (!stored.startsWith("~")) return stored;
  if (stored.startsWith("~~")) return stored.slice(1);
  const hex = Buffer.from(stored.slice(1), "base64url").toString("hex");
  if (hex.length !== 32) return stored; // not written by encodeId: hand it back untouched
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
