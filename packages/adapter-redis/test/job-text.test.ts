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

  it("round-trips a trace context in front, leaving a text without one as it was", () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const cases: Array<[string, string, string | undefined, string]> = [
      ["noop", '{"i":1}', undefined, traceparent],
      ["send:mail", '{"to":"a:b@c"}', '{"x":"~1:"}', '{"traceparent":"00-…","tracestate":"k=v"}'],
      ["ünïcode-😀", '{"text":"日本語 😀"}', '"é"', "~5:😀~:"],
      ["t", "", "", ""],
    ];
    for (const [task, payload, appData, traceContext] of cases) {
      const text = encodeJobText(task, payload, appData, traceContext);
      expect(text.startsWith(`~${traceContext.length}:${traceContext}`)).toBe(true);
      const want: Record<string, string> = { task, payload, traceContext };
      if (appData !== undefined) want.appData = appData;
      expect(parseJobText(text)).toEqual(want);
    }
    expect(encodeJobText("noop", "{}", undefined, undefined)).toBe("4:-:noop{}");
    expect(parseJobText("4:-:noop{}")).not.toHaveProperty("traceContext");
    // a payload that starts with "~" is not taken for a head
    expect(parseJobText(encodeJobText("t", "~1:x", undefined))).toEqual({
      task: "t",
      payload: "~1:x",
    });
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
      "~",
      "~:",
      "~x:4:-:noop",
      "~9:ab4:-:noop",
      "~2:ab",
      "~2:ab9:-:noop",
    ]) {
      expect(parseJobText(bad), bad).toBeUndefined();
    }
  });
});
