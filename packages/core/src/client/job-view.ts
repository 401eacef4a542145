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
  const {
    payload,
    appData,
    result,
    progress,
    lane: _full,
    ...rest
  } = withConfigLanes(info, configName);
  const view: JobView<R> = { ...rest, lane, payload: decoded(payload) };
  if (appData !== undefined) view.appData = decoded(appData);
  if (result !== undefined) view.result = decoded(result) as R;
  if (progress !== undefined) view.progress = decoded(progress);
  return view;
}

/**
 * `info` with the lanes of its dependencies and dependents as config names (the names
 * `tl.lane()` takes); `info` itself when it has neither.
 */
export function withConfigLanes(info: JobInfo, configName: (full: string) => string): JobInfo {
  if (info.dependencies === undefined && info.dependents === undefined) return info;
  const out = { ...info };
  if (info.dependencies !== undefined) {
    out.dependencies = info.dependencies.map((d) => ({ ...d, lane: configName(d.lane) }));
  }
  if (info.dependents !== undefined) {
    out.dependents = info.dependents.map((d) => ({ ...d, lane: configName(d.lane) }));
  }
  return out;
}
