// The README's quickstart, runnable: `npm run example:quickstart`
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask } from "@tasklane/core";
import { z } from "zod";

const sendEmail = defineTask({
  name: "send-email",
  lane: "default",
  schema: z.object({ to: z.email(), subject: z.string() }),
  retry: { maxAttempts: 5, baseMs: 1_000 },
  async run({ to, subject }, ctx) {
    console.log(`attempt ${ctx.attempt}: mail "${subject}" to ${to}`);
  },
});

const tl = createTasklane({
  adapter: createMemoryAdapter(),
  lanes: [
    { name: "high", priority: 100 },
    { name: "default", priority: 40 },
  ],
  tasks: [sendEmail],
});

const worker = tl.worker({ concurrency: 50 });
await worker.start();
await tl.publish(sendEmail, { to: "ada@example.com", subject: "Welcome" });
tl.events.once("succeeded", () => tl.close());
