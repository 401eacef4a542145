import type { JobInfo } from "../adapter.ts";
import { decodeJson } from "../codec.ts";
import type { JobView } from "./tasklane.ts";

/** JSON text as a value; text that does not parse (a foreign writer's) stays text. */
function decoded(text: string): unknown {
  try {
    return decodeJson(text);
  } catch {
    return text;
  }
}

/** A stored job as `getJob` shows it: JSON decoded, `lane` the config name. */
export function toJobView<R>(info: JobInfo, lane: string): JobView<R> {
  const { payload, appData, result, progress, lane: _full, ...rest } = info;
  const view: JobView<R> = { ...rest, lane, payload: decoded(payload) };
  if (appData !== undefined) view.appData = decoded(appData);
  if (result !== undefined) view.result = decoded(result) as R;
  if (progress !== undefined) view.progress = decoded(progress);
  return view;
}
