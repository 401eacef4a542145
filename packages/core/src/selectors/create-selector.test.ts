import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors.ts";
import { createSelector, isSelectorName, SELECTOR_NAMES } from "./create-selector.ts";
import { createSeededRandom } from "./selector.ts";

describe("createSelector", () => {
  it("resolves every built-in name to a selector of that name", () => {
    for (const name of SELECTOR_NAMES) {
      expect(createSelector(name, { random: createSeededRandom(1) }).name).toBe(name);
      expect(isSelectorName(name)).toBe(true);
    }
  });

  it("refuses an unknown name with a ConfigError naming the field", () => {
    const attempt = () => createSelector("highest-priority-first");
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      expect(error).toMatchObject({ code: "CONFIG", field: "selector" });
      expect((error as Error).message).toContain("reduced-lottery");
    }
    expect(isSelectorName("nope")).toBe(false);
  });
});
