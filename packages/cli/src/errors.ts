/**
 * Exit codes and the errors the CLI itself throws. Errors from tasklane carry a string
 * `code` (see @tasklane/core's errors); the CLI maps them by that code rather than by
 * `instanceof`, because a config module may load its own copy of @tasklane/core.
 */

/** What the `tasklane` process exits with. */
export const EXIT_CODES = {
  /** Done. */
  ok: 0,
  /** Failed: the backend, the network, a job not found, a bulk operation that changed less than asked. */
  error: 1,
  /** Bad usage: an unknown command or option, a bad value, an invalid payload or config. */
  usage: 2,
  /** The backend (adapter) cannot do it, or this version of tasklane does not have it yet. */
  unsupported: 3,
  /** Stopped by SIGINT or SIGTERM before it finished (128 + SIGINT's number, as shells report). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** Bad usage found by the CLI (exit 2). `field` names the option, argument or variable. */
export class UsageError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "UsageError";
    this.field = field;
  }
}

/**
 * A feature the installed @tasklane/core does not have yet (exit 3, like an adapter's
 * UnsupportedError): failure groups, the worker registry and schedules are being added to
 * core, and the commands that show them run as soon as the client has their method.
 */
export class NotAvailableError extends Error {
  readonly feature: string;
  constructor(feature: string, method: string) {
    super(
      `${feature} are not supported by this adapter / version yet: the installed ` +
        `@tasklane/core has no ${method}()`,
    );
    this.name = "NotAvailableError";
    this.feature = feature;
  }
}

/** The command ran but did not do all it was asked (exit 1); the message says what. */
export class CommandFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CommandFailedError";
  }
}

/** The command was stopped by a signal after finishing what it had started (exit 130). */
export class InterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InterruptedError";
  }
}

/** tasklane error codes that mean the input was wrong, not the backend. */
const USAGE_CODES = new Set(["CONFIG", "VALIDATION", "PAYLOAD_TOO_LARGE", "UNKNOWN_TASK"]);

/** The exit code for an error thrown by a command. */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof UsageError) return EXIT_CODES.usage;
  if (error instanceof NotAvailableError) return EXIT_CODES.unsupported;
  if (error instanceof InterruptedError) return EXIT_CODES.interrupted;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "UNSUPPORTED") return EXIT_CODES.unsupported;
  if (typeof code === "string" && USAGE_CODES.has(code)) return EXIT_CODES.usage;
  return EXIT_CODES.error;
}

/** One line for stderr: the error's message (its cause's too, for backend failures). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}
