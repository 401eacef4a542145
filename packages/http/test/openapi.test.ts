/**
 * The OpenAPI document against the OpenAPI 3.1 schema and with every $ref resolved, by
 * @apidevtools/swagger-parser (a validator made for the job).
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { createManagementHandler } from "../src/index.ts";
import { createClient } from "./helpers.ts";

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document whose references all resolve", async () => {
    const tl = createClient();
    const handler = createManagementHandler({ tasklane: tl, basePath: "/ops" });
    const response = await handler(new Request("http://localhost/ops/openapi.json"));
    const doc = (await response.json()) as Parameters<typeof SwaggerParser.validate>[0];
    // validate() mutates what it is given: hand it a copy.
    const api = await SwaggerParser.validate(structuredClone(doc));
    expect(api.info.title).toBe("tasklane management API");
    const dereferenced = (await SwaggerParser.dereference(structuredClone(doc))) as {
      paths: Record<
        string,
        { post?: { requestBody?: { content: Record<string, { schema: unknown }> } } }
      >;
    };
    // The concrete enqueue path carries the task's own payload schema.
    const body = JSON.stringify(
      dereferenced.paths["/tasks/send-email/jobs"]?.post?.requestBody?.content["application/json"],
    );
    expect(body).toContain('"format":"email"');
    await tl.close();
  });
});
