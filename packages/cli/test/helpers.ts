/**
 * Test support: the real `tasklane` binary run as a child process (the sources, through
 * Node's "source" export condition, as `npm run tasklane --` runs them), with an
 * environment of the test's own.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
export const CONFIG = fileURLToPath(new URL("./fixtures/app.config.ts", import.meta.url));

/** The parent's environment without anything that configures tasklane or its backends. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(TASKLANE_|REDIS_|SQS_|AWS_|NODE_OPTIONS$|VITEST|FORCE_COLOR$)/.test(key)) continue;
    env[key] = value;
  }
  return env;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string>;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
  timeoutMs?: number;
}

/** A running `tasklane`: what it printed so far, and its end. */
export interface CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with all `stream` printed so far once it matches `pattern`. */
  waitFor(stream: "stdout" | "stderr", pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves when it exits (SIGKILL and reject after the run's timeout). */
  readonly done: Promise<CliResult>;
}

/** Start `tasklane <args>`. */
export function launchCli(args: readonly string[], options: RunOptions = {}): CliProcess {
  const child = spawn(process.execPath, ["--conditions=source", MAIN, ...args], {
    env: { ...baseEnv(), ...options.env },
  });
  child.stdin.end(options.input ?? "");
  const text = { stdout: "", stderr: "" };
  const waiters = new Set<() => void>();
  for (const name of ["stdout", "stderr"] as const) {
    child[name].on("data", (chunk: Buffer) => {
      text[name] += chunk;
      for (const wake of waiters) wake();
    });
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `tasklane ${args.join(" ")} ran over ${timeoutMs} ms:\n${text.stdout}\n${text.stderr}`,
        ),
      );
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      for (const wake of waiters) wake();
      resolve({ code, stdout: text.stdout, stderr: text.stderr });
    });
  });
  return {
    child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    done,
    waitFor(stream, pattern, waitMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(text[stream])) {
            finish();
            resolve(text[stream]);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            finish();
            reject(
              new Error(
                `tasklane exited before printing ${pattern} on ${stream}:\n${text.stdout}\n${text.stderr}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no ${pattern} on ${stream} within ${waitMs} ms:\n${text[stream]}`));
        }, waitMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Run `tasklane <args>` to its end. */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  return launchCli(args, options).done;
}

/** The lines of NDJSON output, parsed. */
export function ndjson<T = Record<string, unknown>>(text: string): T[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** Poll `check` until it returns a truthy value (no fixed sleeps). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 15_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
