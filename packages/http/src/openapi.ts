import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AnyTask } from "@tasklane/core";
import { payloadJsonSchema } from "./views.ts";

type Doc = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;
type Json = Record<string, unknown>;

/** A component name for a task's payload: OpenAPI allows letters, digits, `.`, `-`, `_`. */
function componentName(task: string): string {
  return `TaskPayload.${task.replace(/[^A-Za-z0-9._-]/g, "_")}`;
}

/**
 * The OpenAPI 3.1 document: the routes' zod schemas (by @hono/zod-openapi), then, for
 * each task whose schema library gives a JSON Schema (zod 4 does), its payload schema as
 * a component and a concrete `POST /tasks/<name>/jobs` that uses it.
 */
export function buildOpenApiDocument(
  app: OpenAPIHono,
  tasks: Iterable<AnyTask>,
  info: { title: string; basePath: string },
): Doc {
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: info.title,
      version: "1",
      description:
        "The management API of a tasklane client. Every operation's `x-scope` says what the caller needs: read or write. Errors answer `{ code, message, field?, capability? }`.",
    },
    servers: [{ url: info.basePath === "" ? "/" : info.basePath }],
  });
  const components = doc.components ?? {};
  const schemas = components.schemas ?? {};
  components.schemas = schemas;
  doc.components = components;
  const paths = doc.paths ?? {};
  doc.paths = paths;
  const generic = paths["/tasks/{name}/jobs"]?.post as Json | undefined;
  for (const task of tasks) {
    const payload = payloadJsonSchema(task);
    if (payload === null || generic === undefined) continue;
    const name = componentName(task.name);
    // A payload schema's own $defs are addressed from the document root once embedded.
    schemas[name] = JSON.parse(
      JSON.stringify(payload).replaceAll('"#/$defs/', `"#/components/schemas/${name}/$defs/`),
    );
    const body = {
      allOf: [
        { $ref: "#/components/schemas/EnqueueRequest" },
        { type: "object", properties: { payload: { $ref: `#/components/schemas/${name}` } } },
      ],
    };
    const parameters = ((generic.parameters as Json[] | undefined) ?? []).filter(
      (p) => p.in !== "path",
    );
    paths[`/tasks/${encodeURIComponent(task.name)}/jobs`] = {
      post: {
        ...generic,
        operationId: `enqueue.${task.name.replace(/[^A-Za-z0-9._-]/g, "_")}`,
        summary: `Publish a ${task.name} job (lane ${task.lane})`,
        parameters,
        requestBody: { required: true, content: { "application/json": { schema: body } } },
      } as never,
    };
  }
  return doc;
}
