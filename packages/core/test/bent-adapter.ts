/**
 * Helpers of core's tests: an adapter that behaves otherwise in one respect (a flaky
 * network, a backend answering otherwise, fewer capabilities), and the ConfigError of a
 * call. Not a test file: vitest collects `*.test.ts` only.
 */
import { expect } from "vitest";
import type { Adapter, Capabilities, LaneStore } from "../src/adapter.ts";
import { ConfigError } from "../src/errors.ts";

export interface BendOptions {
  /** The adapter's name (in UnsupportedError messages). Default the inner adapter's. */
  name?: string;
  /** Capabilities declared otherwise. */
  caps?: Partial<Capabilities>;
  /** Lane methods replaced, per lane; a method given as undefined is taken off. */
  lane?: (store: LaneStore) => Partial<Record<keyof LaneStore, unknown>>;
  /** Adapter-level methods to carry over or add (`watch`, `subscribe`, the registry...). */
  extra?: Partial<Adapter>;
}

/** `inner` bent as `options` say; every other lane method is the inner lane's own. */
export function bend(inner: Adapter, options: BendOptions = {}): Adapter {
  return {
    name: options.name ?? inner.name,
    capabilities: { ...inner.capabilities, ...options.caps },
    close: () => inner.close(),
    lane: async (name, laneOptions) => {
      const store = await inner.lane(name, laneOptions);
      if (options.lane === undefined) return store;
      const overrides = options.lane(store);
      return new Proxy(store, {
        get(target, prop, receiver) {
          if (prop in overrides) return overrides[prop as keyof LaneStore];
          const value = Reflect.get(target, prop, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
    ...options.extra,
  };
}

/** The field, value and message of the ConfigError `fn` throws (fails when it throws none). */
export function configError(fn: () => unknown): { field: string; value: unknown; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const { field, value, message } = err as ConfigError;
    return { field, value, message };
  }
  throw new Error("expected a ConfigError");
}
