/**
 * A vitest reporter for scripts/plant-bugs.ts: appends the full name of each failed test
 * to the file named by PLANT_BUGS_FAILED as soon as it fails, so the names survive a run
 * that hangs and has to be killed.
 */
import { appendFileSync } from "node:fs";
import type { Reporter, TestCase } from "vitest/node";

export default class FailedTestsReporter implements Reporter {
  onTestCaseResult(testCase: TestCase): void {
    const file = process.env.PLANT_BUGS_FAILED;
    if (file && testCase.result().state === "failed") {
      appendFileSync(file, `${testCase.fullName.replaceAll(" > ", " ")}\n`);
    }
  }
}
