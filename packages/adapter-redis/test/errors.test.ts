/**
 * The error table for replies a test cannot easily provoke on a live server, built with
 * ioredis's own ReplyError and the exact text ioredis's Cluster client wraps a reply in
 * ("Too many Cluster redirections. Last error: " + the reply): the live cases are in
 * cluster.test.ts and cluster-failover.test.ts.
 */
import { AdapterError } from "@tasklane/core/adapter";
import { ReplyError } from "ioredis";
import { describe, expect, it } from "vitest";
import { mapRedisError } from "../src/errors.ts";
import {
  RedisOutOfMemoryError,
  RedisPermissionError,
  RedisUnavailableError,
} from "../src/index.ts";

const wrap = (reply: Error) => new Error(`Too many Cluster redirections. Last error: ${reply}`);

describe("mapRedisError", () => {
  it.each([
    ["TRYAGAIN Multiple keys request during rehashing of slot"],
    ["CLUSTERDOWN The cluster is down"],
    ["CLUSTERDOWN Hash slot not served"],
    ["MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."],
    ["READONLY You can't write against a read only replica."],
    ["LOADING Redis is loading the dataset in memory"],
  ])("maps %s, bare or wrapped, to RedisUnavailableError", (text) => {
    for (const error of [new ReplyError(text), wrap(new ReplyError(text))]) {
      const mapped = mapRedisError('reserve on lane "x"', error);
      expect(mapped).toBeInstanceOf(RedisUnavailableError);
      expect(mapped.cause).toBe(error);
      expect(mapped.message).toBe(
        `[redis] reserve on lane "x": Redis is unavailable (${error.message})`,
      );
    }
  });

  it("maps a wrapped MOVED, ASK or closed connection to RedisUnavailableError", () => {
    for (const reply of [
      new ReplyError("MOVED 3999 127.0.0.1:7001"),
      new ReplyError("ASK 3999 127.0.0.1:7002"),
      new Error("Connection is closed."),
    ]) {
      const mapped = mapRedisError("put", wrap(reply));
      expect(mapped).toBeInstanceOf(RedisUnavailableError);
      expect(mapped.message).toContain(String(reply));
    }
  });

  it("names the cluster option for a bare MOVED (a plain connection to a Cluster node)", () => {
    const mapped = mapRedisError("put", new ReplyError("MOVED 3999 127.0.0.1:7001"));
    expect(mapped).not.toBeInstanceOf(RedisUnavailableError);
    expect(mapped).toBeInstanceOf(AdapterError);
    expect(mapped.message).toContain("use the adapter's cluster option");
  });

  it("keeps OOM and NOPERM what they are when a redirection's last try met them", () => {
    expect(mapRedisError("put", wrap(new ReplyError("OOM command not allowed")))).toBeInstanceOf(
      RedisOutOfMemoryError,
    );
    expect(
      mapRedisError("put", wrap(new ReplyError("NOPERM this user has no permissions"))),
    ).toBeInstanceOf(RedisPermissionError);
  });

  it("maps a Cluster client that cannot reach any node to RedisUnavailableError", () => {
    for (const text of ["Failed to refresh slots cache.", "None of startup nodes is available"]) {
      expect(mapRedisError("put", new Error(text))).toBeInstanceOf(RedisUnavailableError);
    }
  });
});
