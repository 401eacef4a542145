import { describe, expect, it } from "vitest";
import { encodeJobText, parseJobText } from "../src/job-text.ts";

describe("job text", () => {
  it("round-trips task, payload and appData, including non-ASCII text and colons", () => {
    const cases: Array<[string, string, string | undefined]> = [
      ["noop", '{"i":1}', undefined],
      ["send:mail", '{"to":"a:b@c"}', '{"trace":"x:y"}'],
      ["ünïcode-😀", '{"text":"日本語 😀"}', '"é"'],
      ["t", "", ""],
      ["", '""', undefined],
    ];
    for (const [task, payload, appData] of cases) {
      const parsed = parseJobText(encodeJobText(task, payload, appData));
      const want: Record<string, string> = { task, payload };
      if (appData !== undefined) want.appData = appData;
      expect(parsed).toEqual(want);
    }
  });

  it("tells no appData from an empty one", () => {
    expect(parseJobText(encodeJobText("t", "{}", undefined))).not.toHaveProperty("appData");
    expect(parseJobText(encodeJobText("t", "{}", ""))?.appData).toBe("");
  });

  it("refuses a text tasklane did not write", () => {
    for (const bad of [
      "",
      "garbage",
      "4:-",
      ":-:x",
      "x:-:noop",
      "4:y:noop",
      "9:-:noop",
      "2:9:ab",
      "-1:-:x",
    ]) {
      expect(parseJobText(bad), bad).toBeUndefined();
    }
  });
});
