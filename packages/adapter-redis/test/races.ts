/**
 * The setups of the tests where several processes race on one backend: a fresh
 * redis-server (run with the function library and with EVAL) and a three-node Cluster.
 */
import { type AnyTask, createTasklane, type LaneConfigInput, type Tasklane } from "@tasklane/core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { createRedisAdapter, type RedisAdapterOptions } from "../src/index.ts";
import {
  type RedisClusterNodes,
  type RedisServer,
  startCluster,
  startRedis,
  uniquePrefix,
} from "./helpers.ts";

/** How a child process reaches the same backend. */
export type RaceConnection = { url: string } | { cluster: Array<{ host: string; port: number }> };

/**
 * `it(name)` three times: on a redis-server with each scripting mode, and on a Cluster
 * (describe blocks `title` and `title on a Cluster`). `run` gets the adapter's options,
 * under a prefix of its own, and the connection for the processes it starts.
 */
export function raceOnServerAndCluster(
  title: string,
  name: string,
  timeoutMs: number,
  run: (options: RedisAdapterOptions, connection: RaceConnection) => Promise<unknown>,
): void {
  describe(title, () => {
    let server: RedisServer;
    beforeAll(async () => {
      server = await startRedis();
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    for (const scripting of ["functions", "eval"] as const) {
      it(`${name} (${scripting})`, { timeout: timeoutMs }, async () => {
        await run(
          { connection: server.url, prefix: uniquePrefix(), scripting },
          { url: server.url },
        );
      });
    }
  });

  describe(`${title} on a Cluster`, () => {
    let nodes: RedisClusterNodes;
    beforeAll(async () => {
      nodes = await startCluster();
    }, 60_000);
    afterAll(async () => {
      await nodes?.stop();
    });

    it(name, { timeout: timeoutMs }, async () => {
      const cluster = nodes.ports.map((port) => ({ host: "127.0.0.1", port }));
      await run({ cluster: { nodes: cluster }, prefix: uniquePrefix() }, { cluster });
    });
  });
}

/**
 * `count` tasklane clients on one lane, each with its own adapter (its own connections),
 * as separate processes would be; `use` runs with them, and they are closed after.
 */
export async function withClients(
  count: number,
  options: RedisAdapterOptions,
  lane: LaneConfigInput,
  task: AnyTask,
  use: (clients: Tasklane[]) => Promise<void>,
): Promise<void> {
  const clients: Tasklane[] = [];
  try {
    for (let i = 0; i < count; i++) {
      clients.push(
        createTasklane({ adapter: createRedisAdapter(options), lanes: [lane], tasks: [task] }),
      );
    }
    await use(clients);
  } finally {
    await Promise.all(clients.map((tl) => tl.close({ graceMs: 0 })));
  }
}
