/** `tasklane pause|resume <lane...>`: stop or restart workers taking a lane's jobs. */
import type { CommandContext } from "../context.ts";

export async function setPaused(
  ctx: CommandContext,
  lanes: string[],
  paused: boolean,
): Promise<void> {
  const session = await ctx.connect();
  for (const handle of session.lanes(lanes, "<lanes...>")) {
    if (paused) await handle.pause();
    else await handle.resume();
    if (ctx.json) await ctx.out.json({ lane: handle.name, paused });
    else await ctx.out.line(`${paused ? "paused" : "resumed"} lane ${handle.name}`);
  }
}
