import { describe, expect, it } from "vitest";
import { MAX_ERROR_MESSAGE, MAX_ERROR_NAME, MAX_ERROR_STACK, toJobError } from "./job-error.ts";

class DbError extends Error {
  override name = "DbError";
}

describe("toJobError", () => {
  it("keeps an Error's name, message and stack", () => {
    const error = new DbError("connection refused");
    const out = toJobError(error, "error");
    expect(out).toEqual({
      name: "DbError",
      message: "connection refused",
      stack: error.stack,
      reason: "error",
    });
  });

  it("names an Error subclass's cause chain in the message, and keeps its stack in the stack", () => {
    const root = new RangeError("port out of range");
    const middle = new TypeError("bad address", { cause: root });
    const error = new DbError("connect failed", { cause: middle });
    const out = toJobError(error, "error");
    expect(out.name).toBe("DbError");
    expect(out.message).toBe(
      "connect failed (caused by TypeError: bad address) (caused by RangeError: port out of range)",
    );
    expect(out.stack).toContain("DbError: connect failed");
    expect(out.stack).toContain("[cause]: TypeError: bad address");
    expect(out.stack).toContain("RangeError: port out of range");
  });

  it("describes a non-Error cause", () => {
    const out = toJobError(new Error("outer", { cause: { code: 42 } }), "error");
    expect(out.message).toBe("outer (caused by { code: 42 })");
  });

  it("names an AggregateError's errors", () => {
    const error = new AggregateError(
      [new TypeError("a"), new RangeError("b"), "c"],
      "All promises were rejected",
    );
    const out = toJobError(error, "error");
    expect(out.name).toBe("AggregateError");
    expect(out.message).toBe(
      "All promises were rejected [3 errors: TypeError: a; RangeError: b; 'c']",
    );
    expect(out.stack).toContain("[errors]");
  });

  it("bounds an AggregateError of many errors", () => {
    const errors = Array.from({ length: 1_000 }, (_, i) => new Error(`e${i}`));
    const out = toJobError(new AggregateError(errors, ""), "error");
    expect(out.message).toBe(
      "[1000 errors: Error: e0; Error: e1; Error: e2; Error: e3; Error: e4; and 995 more]",
    );
    expect(out.stack?.length).toBeLessThanOrEqual(MAX_ERROR_STACK);
  });

  it("keeps a thrown string as the message", () => {
    expect(toJobError("it broke", "error")).toEqual({
      name: "Error",
      message: "it broke",
      reason: "error",
    });
  });

  it.each([
    [42, "42"],
    [null, "null"],
    [undefined, "undefined"],
    [Symbol("boom"), "Symbol(boom)"],
    [10n, "10n"],
    [false, "false"],
    [{ code: "E_FULL", retryable: true }, "{ code: 'E_FULL', retryable: true }"],
    [[1, 2], "[ 1, 2 ]"],
  ])("describes a thrown %s", (thrown, message) => {
    expect(toJobError(thrown, "error")).toEqual({ name: "Error", message, reason: "error" });
  });

  it("describes a circular object with a cycle marker (not [object Object])", () => {
    const thrown: Record<string, unknown> = { id: 7 };
    thrown.self = thrown;
    const out = toJobError(thrown, "error");
    expect(out.message).toBe("<ref *1> { id: 7, self: [Circular *1] }");
  });

  it("takes name and message from an object with a message field, the rest in the stack", () => {
    const thrown = { name: "HttpError", message: "503 from upstream", status: 503 };
    const out = toJobError(thrown, "error");
    expect(out).toMatchObject({ name: "HttpError", message: "503 from upstream", reason: "error" });
    expect(out.stack).toContain("status: 503");
    expect(toJobError({ message: "no name" }, "error").name).toBe("Error");
  });

  it("bounds the name, the message and the stack", () => {
    const error = new Error("m".repeat(100_000));
    error.name = "N".repeat(10_000);
    const out = toJobError(error, "error");
    expect(out.name.length).toBe(MAX_ERROR_NAME);
    expect(out.message.length).toBe(MAX_ERROR_MESSAGE);
    expect(out.message.endsWith("…")).toBe(true);
    expect(out.stack?.length).toBeLessThanOrEqual(MAX_ERROR_STACK);
    expect(toJobError("s".repeat(100_000), "error").message.length).toBe(MAX_ERROR_MESSAGE);
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    expect(toJobError(wide, "error").message.length).toBe(MAX_ERROR_MESSAGE);
  });

  it("never throws, whatever was thrown", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("trap");
        },
        getPrototypeOf() {
          throw new Error("trap");
        },
      },
    );
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const badGetter = new Error("x");
    Object.defineProperty(badGetter, "message", {
      get() {
        throw new Error("getter");
      },
    });
    for (const thrown of [hostile, revoked.proxy, badGetter]) {
      const out = toJobError(thrown, "error");
      expect(out.reason).toBe("error");
      expect(typeof out.message).toBe("string");
    }
  });
  it("names a thrown null or undefined as such", () => {
    expect(toJobError(null, "error")).toEqual({ name: "Error", message: "null", reason: "error" });
    expect(toJobError(undefined, "timeout")).toEqual({
      name: "Error",
      message: "undefined",
      reason: "timeout",
    });
    expect(toJobError(42, "error").message).toBe("42");
  });

  it("falls back to the name Error for an empty or non-string name", () => {
    const unnamed = new Error("m");
    unnamed.name = "";
    expect(toJobError(unnamed, "error").name).toBe("Error");
    const numbered = new Error("m");
    (numbered as { name: unknown }).name = 5;
    expect(toJobError(numbered, "error").name).toBe("Error");
    expect(toJobError({ name: "", message: "m" }, "error").name).toBe("Error");
    expect(toJobError({ name: 7, message: "m" }, "error").name).toBe("Error");
    expect(toJobError({ name: "Remote", message: "m" }, "error").name).toBe("Remote");
    const cause = new Error("inner");
    (cause as { name: unknown }).name = 9;
    expect(toJobError(new Error("outer", { cause }), "error").message).toBe(
      "outer (caused by Error: inner)",
    );
  });

  it("describes an object without a string message in the message, with no stack", () => {
    const out = toJobError({ message: 5, code: "E" }, "error");
    expect(out).toEqual({ name: "Error", message: "{ message: 5, code: 'E' }", reason: "error" });
    const notString = new Error("x");
    (notString as { message: unknown }).message = { detail: 1 };
    expect(toJobError(notString, "error").message).toBe("{ detail: 1 }");
  });

  it("follows the cause chain three deep", () => {
    let error = new Error("e0");
    for (let i = 1; i <= 4; i++) error = new Error(`e${i}`, { cause: error });
    expect(toJobError(error, "error").message).toBe(
      "e4 (caused by Error: e3) (caused by Error: e2) (caused by Error: e1)",
    );
  });

  it("lists five errors of an AggregateError without a remainder, and none of an empty one", () => {
    const five = Array.from({ length: 5 }, (_, i) => new Error(`e${i}`));
    expect(toJobError(new AggregateError(five, "all"), "error").message).toBe(
      "all [5 errors: Error: e0; Error: e1; Error: e2; Error: e3; Error: e4]",
    );
    expect(toJobError(new AggregateError([], "none"), "error").message).toBe("none");
    // an Error with an errors array is not an AggregateError: no list
    const lookalike = Object.assign(new Error("own"), { errors: [new Error("x")] });
    expect(toJobError(lookalike, "error").message).toBe("own");
  });

  it("keeps a plain error's own stack, and stores no empty stack", () => {
    const error = new Error("m");
    error.stack = "custom stack";
    expect(toJobError(error, "error").stack).toBe("custom stack");
    const bare = new Error("m");
    bare.stack = "";
    expect(toJobError(bare, "error")).not.toHaveProperty("stack");
  });

  it("keeps a message of exactly the limit whole", () => {
    const exact = "m".repeat(MAX_ERROR_MESSAGE);
    expect(toJobError(new Error(exact), "error").message).toBe(exact);
    expect(toJobError(`${exact}x`, "error").message).toBe(`${"m".repeat(MAX_ERROR_MESSAGE - 1)}…`);
  });
});
