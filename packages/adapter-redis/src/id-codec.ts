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
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function encodeId(id: string): string {
  if (id.length === 36 && UUID.test(id)) {
    return `~${Buffer.from(id.replaceAll("-", ""), "hex").toString("base64url")}`;
  }
  return id.startsWith("~") ? `~${id}` : id;
}

export function decodeId(stored: string): string {
  if (!stored.startsWith("~")) return stored;
  if (stored.startsWith("~~")) return stored.slice(1);
  const hex = Buffer.from(stored.slice(1), "base64url").toString("hex");
  if (hex.length !== 32) return stored; // not written by encodeId: hand it back untouched
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
