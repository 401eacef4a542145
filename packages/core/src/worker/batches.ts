/** `items` in batches of at most `max` (one batch, the array itself, when it fits). */
export function inBatches<T>(items: T[], max: number): T[][] {
  if (items.length <= max) return items.length === 0 ? [] : [items];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += max) out.push(items.slice(i, i + max));
  return out;
}
