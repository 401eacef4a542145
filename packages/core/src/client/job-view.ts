import type { JobInfo } from "../adapter.ts";
import { decodeOrText as decoded } from "../codec.ts";
import type { JobView } from "./tasklane.ts";

/**
 * A stored job as `getJob` shows it: JSON decoded, `lane` the config name, and the lanes
 * of its dependencies and dependents too (`configName` maps a full name).
 */
export function toJobView<R>(
  info: JobInfo,
  lane: string,
  configName: (full: string) => string = (full) => full,
): JobView<R> {
  const { payload, appData, result, progress, lane: _full, ...rest } = info;
  const view: JobView<R> = { ...rest, lane, payload: decoded(payload) };
  if (view.dependencies !== undefined) {
    view.dependencies = view.dependencies.map((d) => ({ ...d, lane: configName(d.lane) }));
  }
  if (view.dependents !== undefined) {
    view.dependents = view.dependents.map((d) => ({ ...d, lane: configName(d.lane) }));
  }
  if (appData !== undefined) view.appData = decoded(appData);
  if (result !== undefined) view.result = decoded(result) as R;
  if (progress !== undefined) view.progress = decoded(progress);
  return view;
}
