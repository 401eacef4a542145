/**
 * The `tasklane` binary against SQS: fauxqs (a real SQS-protocol server from npm) runs in
 * the test process on a free port, and the CLI reaches it over HTTP through SQS_ENDPOINT.
 * What SQS cannot do exits 3 with the adapter's message.
 */
import { randomUUID } from "node:crypto";
import { ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { createSqsAdapter } from "@tasklane/adapter-sqs";
import { createTasklane, type Tasklane } from "@tasklane/core";
import { startFauxqs } from "fauxqs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { failing, flaky, lanes, ran, tasks } from "./fixtures/app.config.ts";
import { CONFIG, ndjson, runCli, waitFor } from "./helpers.ts";

let server: { port: number; stop(): Promise<void> };
let endpoint: string;
const apps: Tasklane[] = [];

beforeAll(async () => {
  server = await startFauxqs({ port: 0, logger: false });
  endpoint = `http://127.0.0.1:${server.port}`;
});
afterEach(async () => {
  failing.clear();
  await Promise.all(apps.splice(0).map((tl) => tl.close({ graceMs: 1_000 })));
});
afterAll(async () => {
  await server?.stop();
});

const credentials = { accessKeyId: "test", secretAccessKey: "test" };

/** The application on SQS: its queues named `<queuePrefix><lane>`. */
function createApp(queuePrefix: string): Tasklane {
  const tl = createTasklane({
    adapter: createSqsAdapter({
      clientConfig: { endpoint, region: "us-east-1", credentials },
      queuePrefix,
    }),
    lanes,
    tasks,
  });
  apps.push(tl);
  return tl;
}

/** Creates every lane's queues, as the application does when it starts. */
async function openLanes(app: Tasklane): Promise<void> {
  await Promise.all(lanes.map((lane) => app.lane(lane.name).counts()));
}

const cliEnv = (queuePrefix: string) => ({
  TASKLANE_ADAPTER: "sqs",
  SQS_ENDPOINT: endpoint,
  SQS_QUEUE_PREFIX: queuePrefix,
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test",
  TASKLANE_CONFIG: CONFIG,
});

const newPrefix = () => `cli${randomUUID().slice(0, 8)}-`;
let nextN = 5_000;

describe("on SQS", () => {
  it("status: approximate counts, no stats; a lane whose queue does not exist is an error, and the CLI creates none", async () => {
    const prefix = newPrefix();
    const missing = await runCli(["status", "--lane", "high"], { env: cliEnv(prefix) });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      new RegExp(
        `^error: \\[sqs\\] SQS queue "${prefix}high" does not exist and createQueues is false\n$`,
      ),
    );

    const sqs = new SQSClient({ endpoint, region: "us-east-1", credentials });
    const listed = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: prefix }));
    sqs.destroy();
    expect(listed.QueueUrls ?? []).toEqual([]);

    const app = createApp(prefix);
    await openLanes(app);
    await app.publishMany(flaky, [{ payload: { n: nextN++ } }, { payload: { n: nextN++ } }]);
    const { code, stdout, stderr } = await runCli(["status", "--lane", "default"], {
      env: cliEnv(prefix),
    });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        "lane     waiting  delayed  active  failed  succeeded  canceled  finished/s  failed/s  wait p50  wait p99  run p50  run p99",
        "default       ~2       ~0      ~0      ~0          -         -           -         -         -         -        -        -",
        "",
        'counts: approximate (sqs); sqs keeps no succeeded or canceled jobs ("-")',
        "rates and percentiles: the sqs adapter keeps no stats",
        "",
      ].join("\n"),
    );
    const json = await runCli(["status", "--json", "--lane", "default"], { env: cliEnv(prefix) });
    expect(ndjson(json.stdout)).toEqual([
      {
        lane: "default",
        paused: null,
        counts: { waiting: 2, delayed: 0, active: 0, failed: 0, succeeded: 0, canceled: 0 },
        approximate: true,
        day: new Date().toISOString().slice(0, 10),
        rates: null,
        wait: null,
        run: null,
      },
    ]);
  });

  it("enqueue publishes a job the application's worker runs; a failed job is retried from the dead-letter queue", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await openLanes(app);
    await app.worker().start();
    const n = nextN++;
    failing.add(n);
    const enqueued = await runCli(["enqueue", "flaky", `{"n":${n}}`, "--json"], {
      env: cliEnv(prefix),
    });
    expect(enqueued.code).toBe(0);
    expect(ndjson(enqueued.stdout)[0]).toMatchObject({
      status: "created",
      lane: "default",
      task: "flaky",
    });
    await waitFor(async () => (await app.lane("default").counts()).failed === 1, "the job to fail");

    failing.delete(n);
    const retried = await runCli(["jobs", "retry", "--all", "--lane", "default"], {
      env: cliEnv(prefix),
    });
    expect(retried).toEqual({
      code: 0,
      stdout: "default: retried 1 job (1 matched)\n",
      stderr: "",
    });
    await waitFor(() => ran.filter((x) => x === n).length === 2, "the retried job to run");
    await waitFor(async () => (await app.lane("default").counts()).failed === 0, "an empty DLQ");
  });

  it.each([
    [["jobs", "list"], "The sqs adapter does not support listing jobs (list)"],
    [["jobs", "get", "j1"], "The sqs adapter does not support reading a job by id (get)"],
    [
      ["jobs", "cancel", "j1", "--lane", "default"],
      "The sqs adapter does not support cancel (cancel)",
    ],
    [
      ["jobs", "delete", "--all", "--state", "failed"],
      "The sqs adapter does not support delete (delete)",
    ],
    [
      ["jobs", "retry", "--all", "--task", "flaky"],
      "The sqs adapter does not support listing jobs (list): --task and --limit need it; retry --all alone moves every failed job",
    ],
    [
      ["tail"],
      "The sqs adapter does not support events from other processes (subscribe): watch jobs with lane(name).get(id) instead",
    ],
    [["pause", "default"], "The sqs adapter does not support pause"],
    [
      ["enqueue", "flaky", '{"n":1}', "--priority", "5"],
      "The sqs adapter does not support job-level priorities: use separate lanes instead",
    ],
    [["failures"], "The sqs adapter does not support failure groups (capability failureGroups)"],
  ])("tasklane %j exits 3: unsupported", async (args, message) => {
    const prefix = newPrefix();
    await openLanes(createApp(prefix));
    const { code, stdout, stderr } = await runCli(args, { env: cliEnv(prefix) });
    expect({ code, stdout, stderr }).toEqual({
      code: 3,
      stdout: "",
      stderr: `error: ${message}\n`,
    });
  });
});
