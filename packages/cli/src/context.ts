import type { Writable } from "node:stream";
import type { AnyTask } from "@tasklane/core";
import { resolveSetup, type Setup } from "./config.ts";
import type { Environment } from "./environment.ts";
import type { LineWriter } from "./output.ts";
import { connect, type Session } from "./session.ts";

/** The options every command takes (on `tasklane` itself, before or after the command). */
export interface GlobalOptions {
  config?: string;
  lanes?: string;
  adapter?: string;
  namespace?: string;
  json?: boolean;
}

/** What a command runs with. */
export interface CommandContext {
  readonly env: Environment;
  readonly cwd: string;
  /** stdout, line by line (results). */
  readonly out: LineWriter;
  /** stderr (notes, warnings, the progress bar). */
  readonly err: Writable & { isTTY?: boolean };
  /** `--json`: machine-readable results on stdout, one JSON value per line. */
  readonly json: boolean;
  readonly globals: GlobalOptions;
  /** Aborted on SIGINT / SIGTERM: long-running commands stop at the next safe point. */
  readonly signal: AbortSignal;
  /** The application's lanes and tasks (config module or lane names). */
  setup(): Promise<Setup>;
  /** Connect to the backend; closed by the CLI when the command ends. */
  connect(extraTasks?: AnyTask[]): Promise<Session>;
  /** A note for people on stderr (never mixed into stdout's results). */
  note(text: string): void;
}

export interface ContextInput {
  env: Environment;
  cwd: string;
  out: LineWriter;
  err: Writable & { isTTY?: boolean };
  globals: GlobalOptions;
  signal: AbortSignal;
}

/** A context whose session (if any) is closed by `dispose`. */
export function createContext(input: ContextInput): {
  context: CommandContext;
  dispose(): Promise<void>;
} {
  let setup: Promise<Setup> | undefined;
  let session: Session | undefined;
  const loadSetup = () => {
    setup ??= resolveSetup(
      {
        config: input.globals.config,
        lanes: input.globals.lanes,
        namespace: input.globals.namespace,
      },
      input.env,
      input.cwd,
    );
    return setup;
  };
  const context: CommandContext = {
    env: input.env,
    cwd: input.cwd,
    out: input.out,
    err: input.err,
    json: input.globals.json === true,
    globals: input.globals,
    signal: input.signal,
    setup: loadSetup,
    async connect(extraTasks) {
      if (session) return session;
      session = await connect(await loadSetup(), input.env, {
        adapter: input.globals.adapter,
        ...(extraTasks !== undefined ? { extraTasks } : {}),
      });
      return session;
    },
    note(text) {
      input.err.write(`${text}\n`);
    },
  };
  return {
    context,
    async dispose() {
      await session?.close();
    },
  };
}
