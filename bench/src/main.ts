/**
 * `npm run bench [-- --quick] [-- --only <system|backend|scenario>[,...]] [-- --repeats N] [-- --save]`
 *
 * The orchestrator plans the cases, starts its own redis-server and fauxqs, runs every
 * case in a fresh child process (this same file with `--child`), and writes
 * out/results.jsonl and out/latest.md (git-ignored); with --save, a full run of every
 * case, results/ and the tables in README.md, the committed reference.
 */
import { parseArgs } from "node:util";
import { runCase } from "./child.ts";
import { orchestrate } from "./orchestrator.ts";
import type { CaseSpec } from "./types.ts";

const HELP = `Usage: npm run bench -- [options]

  --quick              about 2 minutes: smaller sizes, one run per case
  --only <list>        comma-separated systems, backends (memory, redis, sqs), scenarios or
                       scenario prefixes (publish, process, latency); repeatable
  --otel               the cost of telemetry: tasklane-redis, tasklane-redis-otel and
                       tasklane-redis-metrics at c=100, interleaved
  --repeats <n>        runs per case (default: 3 full, 1 quick)
  --jobs <n>           jobs per memory/Redis case (default: 20000 full, 5000 quick)
  --sqs-jobs <n>       jobs per SQS case (default: 5000 full, 1000 quick)
  --cpu-prof <dir>     write a V8 CPU profile of every case's child process into <dir>
                       (open in Chrome DevTools; the timings of that run are not comparable)
  --save               refresh the committed reference: write bench/results/latest.md,
                       append to bench/results/results.jsonl and update the tables in
                       bench/README.md. Only a full run of every case: refused with --quick,
                       --only, --repeats, --jobs, --sqs-jobs or --cpu-prof
  --list               print the systems and scenarios, run nothing
  --help               this text

Without --save a run writes bench/out/latest.md and appends to bench/out/results.jsonl
(git-ignored). Only a full run of every case judges the targets; a quick or partial run
shows its figures as "not judged".
`;

/** What --otel runs: the plain and the instrumented Redis worker at c=100. */
const OTEL_CASES = "tasklane-redis,tasklane-redis-otel,tasklane-redis-metrics,process-c100";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string", multiple: true },
    otel: { type: "boolean", default: false },
    repeats: { type: "string" },
    jobs: { type: "string" },
    "sqs-jobs": { type: "string" },
    "cpu-prof": { type: "string" },
    list: { type: "boolean", default: false },
    save: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
    child: { type: "string" },
  },
  strict: true,
  allowPositionals: false,
});

if (values.child !== undefined) {
  const spec = JSON.parse(values.child) as CaseSpec;
  const result = await runCase(spec);
  // Exit explicitly: a peer may leave timers or sockets behind after teardown.
  process.send?.(result, () => process.exit(0));
} else if (values.help) {
  process.stdout.write(HELP);
} else {
  const positiveInt = (name: string, raw: string | undefined): number | undefined => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) {
      process.stderr.write(`--${name} must be a positive integer, got "${raw}"\n`);
      process.exit(2);
    }
    return n;
  };
  const code = await orchestrate({
    quick: values.quick,
    only: [...(values.only ?? []), ...(values.otel ? [OTEL_CASES] : [])]
      .flatMap((item) => item.split(","))
      .filter((item) => item !== ""),
    repeats: positiveInt("repeats", values.repeats),
    jobs: positiveInt("jobs", values.jobs),
    sqsJobs: positiveInt("sqs-jobs", values["sqs-jobs"]),
    list: values.list,
    cpuProfDir: values["cpu-prof"],
    save: values.save,
    argv: process.argv.slice(2),
  });
  process.exitCode = code;
}
