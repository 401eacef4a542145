/** The tasks and the start time core's schedule tests share. Not a test file. */
import { z } from "zod";
import { defineTask } from "../src/index.ts";

/** A Monday, 12:00:00 UTC. */
export const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);

/** A task of lane "cron". */
export const tick = defineTask({
  name: "tick",
  lane: "cron",
  schema: z.object({ n: z.number() }),
  run: async () => {},
});

/** A task of lane "side". */
export const other = defineTask({
  name: "other",
  lane: "side",
  schema: z.object({ n: z.number() }),
  run: async () => {},
});
