import { describe, expect, it } from "vitest";
import {
  AdapterError,
  CanceledError,
  ClosedError,
  ConfigError,
  JobFailedError,
  JobNotFoundError,
  LaneFullError,
  LockLostError,
  MovedError,
  PayloadTooLargeError,
  ResultTooLargeError,
  RetryAfterError,
  ShutdownError,
  TasklaneError,
  TimeoutError,
  UnknownTaskError,
  UnrecoverableError,
  UnsupportedError,
  ValidationError,
  WaitTimeoutError,
} from "../src/index.ts";

/**
 * The `code` of every error is the stable way to branch on it (`err.code === "LOCK_LOST"`),
 * across copies of the package where `instanceof` fails; the message names the values.
 */
describe("every error's code, name and message", () => {
  const cases: Array<[() => TasklaneError, string, string, string]> = [
    [
      () => new ConfigError("lanes[0].leaseMs", 5, "must be >= 10 ms"),
      "CONFIG",
      "ConfigError",
      "Invalid option lanes[0].leaseMs = 5: must be >= 10 ms",
    ],
    [
      () => new PayloadTooLargeError("Payload", 20, 10),
      "PAYLOAD_TOO_LARGE",
      "PayloadTooLargeError",
      "Payload is 20 bytes encoded, over the limit of 10 bytes",
    ],
    [
      () => new UnsupportedError("sqs", "tags"),
      "UNSUPPORTED",
      "UnsupportedError",
      "The sqs adapter does not support tags",
    ],
    [
      () => new UnsupportedError("sqs", "tags", "options.tags"),
      "UNSUPPORTED",
      "UnsupportedError",
      "The sqs adapter does not support tags: options.tags",
    ],
    [() => new ClosedError("The client"), "CLOSED", "ClosedError", "The client is closed"],
    [
      () => new LaneFullError("q", 3),
      "LANE_FULL",
      "LaneFullError",
      'Lane "q" holds its maximum of 3 jobs',
    ],
    [() => new LockLostError("j1"), "LOCK_LOST", "LockLostError", "Lost the lease on job j1"],
    [() => new CanceledError("j1"), "CANCELED", "CanceledError", "Job j1 was canceled"],
    [
      () => new TimeoutError("t", 500),
      "TIMEOUT",
      "TimeoutError",
      'Task "t" exceeded its time limit of 500 ms',
    ],
    [() => new UnrecoverableError("bad input"), "UNRECOVERABLE", "UnrecoverableError", "bad input"],
    [
      () => new RetryAfterError(1_000, 250),
      "RETRY_AFTER",
      "RetryAfterError",
      "Retry after 250 ms (the attempt is not spent)",
    ],
    [() => new ShutdownError(), "SHUTDOWN", "ShutdownError", "The worker is shutting down"],
    [
      () => new AdapterError("redis", "connection reset"),
      "ADAPTER",
      "AdapterError",
      "[redis] connection reset",
    ],
    [() => new UnknownTaskError("gone"), "UNKNOWN_TASK", "UnknownTaskError", 'Unknown task "gone"'],
    [
      () => new ResultTooLargeError("t", 20, 10),
      "RESULT_TOO_LARGE",
      "ResultTooLargeError",
      'Result of task "t" is 20 bytes encoded, over the limit of 10 bytes',
    ],
    [() => new MovedError("j1"), "MOVED", "MovedError", "Job j1 was moved to another lane"],
    [() => new JobNotFoundError("j1"), "JOB_NOT_FOUND", "JobNotFoundError", "No lane holds job j1"],
    [
      () => new WaitTimeoutError("j1", 100),
      "WAIT_TIMEOUT",
      "WaitTimeoutError",
      "Job j1 did not finish within 100 ms",
    ],
    [
      () => new JobFailedError("j1", "q", "canceled", undefined),
      "JOB_FAILED",
      "JobFailedError",
      "Job j1 ended canceled",
    ],
    [
      () => new JobFailedError("j1", "q", "expired", undefined),
      "JOB_FAILED",
      "JobFailedError",
      "Job j1 ended expired",
    ],
    [
      () => new JobFailedError("j1", "q", "failed", undefined),
      "JOB_FAILED",
      "JobFailedError",
      "Job j1 failed: no error stored",
    ],
    [
      () =>
        new JobFailedError("j1", "q", "failed", {
          name: "TypeError",
          message: "x is undefined",
          reason: "error",
        }),
      "JOB_FAILED",
      "JobFailedError",
      "Job j1 failed: TypeError: x is undefined",
    ],
  ];
  // Made inside each test, not when the file loads, so each test runs the constructor.
  it.each(cases)("%s", (make, code, name, message) => {
    const err = make();
    expect(err).toBeInstanceOf(TasklaneError);
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe(code);
    expect(err.name).toBe(name);
    expect(err.message).toBe(message);
  });

  it("keeps the values the messages name as fields", () => {
    expect(new ConfigError("f", 5, "p")).toMatchObject({ field: "f", value: 5 });
    expect(new PayloadTooLargeError("P", 20, 10)).toMatchObject({ sizeBytes: 20, limitBytes: 10 });
    expect(new ResultTooLargeError("t", 20, 10)).toMatchObject({ sizeBytes: 20, limitBytes: 10 });
    expect(new UnsupportedError("sqs", "tags")).toMatchObject({ adapter: "sqs", feature: "tags" });
    expect(new LaneFullError("q", 3).limit).toBe(3);
    expect(new TimeoutError("t", 500).timeLimitMs).toBe(500);
    expect(new RetryAfterError(1_000, 250).runAt).toBe(1_000);
    expect(new AdapterError("redis", "x").adapter).toBe("redis");
    expect(new UnknownTaskError("gone").task).toBe("gone");
    expect(new WaitTimeoutError("j1", 100)).toMatchObject({ jobId: "j1", timeoutMs: 100 });
    const failed = new JobFailedError("j1", "q", "failed", {
      name: "E",
      message: "m",
      reason: "error",
    });
    expect(failed).toMatchObject({ jobId: "j1", lane: "q", state: "failed", error: { name: "E" } });
    const cause = new Error("root");
    expect(new AdapterError("redis", "x", { cause }).cause).toBe(cause);
    expect(new UnrecoverableError("x", { cause }).cause).toBe(cause);
  });
});

describe("ValidationError's message", () => {
  it("names each issue's path, (root) for the payload itself, and the subject", () => {
    const err = new ValidationError("t", [
      { path: ["a", 0, "b"], message: "Required" },
      { path: [], message: "Expected object" },
    ]);
    expect(err.code).toBe("VALIDATION");
    expect(err.message).toBe(
      'Payload for task "t" failed its schema: a.0.b: Required; (root): Expected object',
    );
    expect(new ValidationError("t", [{ path: [], message: "m" }], "Result").message).toBe(
      'Result for task "t" failed its schema: (root): m',
    );
  });

  it("names the first five issues and keeps them all", () => {
    const issues = Array.from({ length: 7 }, (_, i) => ({ path: [`f${i}`], message: "bad" }));
    const err = new ValidationError("t", issues);
    expect(err.message).toContain("f4: bad");
    expect(err.message).not.toContain("f5");
    expect(err.issues).toHaveLength(7);
    expect(err.task).toBe("t");
  });
});

describe("ConfigError's rendering of the value", () => {
  it("shows strings quoted, other values as JSON, and undefined as undefined", () => {
    expect(new ConfigError("f", "abc", "p").message).toBe('Invalid option f = "abc": p');
    expect(new ConfigError("f", { a: [1] }, "p").message).toBe('Invalid option f = {"a":[1]}: p');
    expect(new ConfigError("f", undefined, "p").message).toBe("Invalid option f = undefined: p");
  });

  it("cuts a value longer than 80 characters to 77 and an ellipsis; 80 are shown whole", () => {
    const eighty = "x".repeat(78); // 80 characters with its quotes
    expect(new ConfigError("f", eighty, "p").message).toBe(`Invalid option f = "${eighty}": p`);
    const long = "y".repeat(79);
    expect(new ConfigError("f", long, "p").message).toBe(
      `Invalid option f = "${"y".repeat(76)}...: p`,
    );
  });

  it("shows a value JSON cannot encode as a string", () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(new ConfigError("f", circular, "p").message).toBe(
      "Invalid option f = [object Object]: p",
    );
    expect(new ConfigError("f", 10n, "p").message).toBe("Invalid option f = 10: p");
  });
});
