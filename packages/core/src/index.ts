export * from "./adapter.ts";
export * from "./clock.ts";
export * from "./errors.ts";
export * from "./selectors/selector.ts";
export * from "./stats.ts";
