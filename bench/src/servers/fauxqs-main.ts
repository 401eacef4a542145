/**
 * Runs fauxqs in its own process (like a real SQS endpoint, it must not share the event
 * loop of the process being measured). Started by servers/fauxqs.ts with fork(); reports
 * its port over IPC and stops when the parent disconnects or sends SIGTERM.
 */
import { startFauxqs } from "fauxqs";

const server = await startFauxqs({ port: 0, logger: false });
const stop = async () => {
  await server.stop();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("disconnect", () => void stop());
process.send?.({ port: server.port });
