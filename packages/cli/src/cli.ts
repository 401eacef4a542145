/**
 * `runCli(argv)`: parse, run one command, return its exit code. Errors become one line on
 * stderr and an exit code (see EXIT_CODES); the session is closed whatever happened.
 */
import type { Writable } from "node:stream";
import { CommanderError } from "commander";
import { createContext, type GlobalOptions } from "./context.ts";
import type { Environment } from "./environment.ts";
import { describeError, EXIT_CODES, exitCodeOf } from "./errors.ts";
import { createLineWriter } from "./output.ts";
import { createProgram } from "./program.ts";

export interface CliIo {
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
  env: Environment;
  cwd: string;
  /** Aborted on SIGINT / SIGTERM: long commands stop at their next safe point. */
  signal: AbortSignal;
}

/** Run `tasklane <argv…>` (argv without node and the script) and resolve to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT_CODES.ok;
  const out = createLineWriter(io.stdout);
  const program = createProgram(
    async (command, body) => {
      const { context, dispose } = createContext({
        env: io.env,
        cwd: io.cwd,
        out,
        err: io.stderr,
        globals: command.optsWithGlobals<GlobalOptions>(),
        signal: io.signal,
      });
      try {
        await body(context);
      } catch (error) {
        exitCode = exitCodeOf(error);
        io.stderr.write(`error: ${describeError(error)}\n`);
      } finally {
        try {
          await dispose();
        } catch (error) {
          // A close that fails after the command did its work: say so, keep its exit code.
          io.stderr.write(`warning: closing the connection failed: ${describeError(error)}\n`);
        }
      }
    },
    {
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    },
  );
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    // commander's own exits: help and version (0), and usage errors it has already printed.
    if (error instanceof CommanderError)
      return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    throw error;
  }
  return exitCode;
}
