/**
 * The `tasklane` executable: runs the CLI on this process's arguments and streams, and
 * exits with its code. The first SIGINT / SIGTERM asks the command to stop at its next
 * safe point (tail ends cleanly, a bulk operation after its batch in flight); a second one
 * exits at once.
 */
import { runCli } from "./cli.ts";
import { EXIT_CODES } from "./errors.ts";

const controller = new AbortController();
const onSignal = () => {
  if (controller.signal.aborted) process.exit(EXIT_CODES.interrupted);
  controller.abort();
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
});
process.off("SIGINT", onSignal);
process.off("SIGTERM", onSignal);
