import { fork } from "node:child_process";
import { packageVersion } from "../machine.ts";

/** A fauxqs server in its own process, started by this run and stopped by it. */
export interface FauxqsServer {
  endpoint: string;
  region: string;
  version: string;
  stop(): Promise<void>;
}

export async function startFauxqsServer(): Promise<FauxqsServer> {
  const child = fork(new URL("./fauxqs-main.ts", import.meta.url), [], {
    execPath: process.execPath,
    execArgv: ["--conditions=source", "--disable-warning=ExperimentalWarning"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("fauxqs did not start in 20 s")), 20_000);
    child.once("message", (message) => {
      clearTimeout(timer);
      resolve((message as { port: number }).port);
    });
    child.once("exit", (code) => reject(new Error(`fauxqs exited at start (${code})`)));
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    region: "us-east-1",
    version: packageVersion("fauxqs"),
    async stop() {
      if (exited) return;
      const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      await done;
    },
  };
}
