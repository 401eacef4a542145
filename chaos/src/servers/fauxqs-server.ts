/**
 * fauxqs, an SQS server from npm, running in this (the orchestrating) process. The worker
 * processes reach it over HTTP like any SQS endpoint, so one server serves them all.
 */
import { startFauxqs } from "fauxqs";

export interface ChaosSqs {
  endpoint: string;
  region: string;
  stop(): Promise<void>;
}

export async function startChaosSqs(): Promise<ChaosSqs> {
  const server = await startFauxqs({ port: 0, logger: false });
  return {
    endpoint: `http://127.0.0.1:${server.port}`,
    region: "us-east-1",
    stop: () => server.stop(),
  };
}
