// Writes the API's OpenAPI document (from the http package's HttpApi contract) for openapi-typescript,
// with the schema of a live event's data (GET /api/events streams text, so the contract names it here).
import { writeFileSync } from "node:fs"
import { URL } from "node:url"
import { OpenApi } from "@effect/platform"
import { LiveEvent } from "@botrelay/core"
import { Api } from "@botrelay/http"
import { JSONSchema } from "effect"

const spec = OpenApi.fromApi(Api.Api)
const definitions = {}
JSONSchema.fromAST(LiveEvent.LiveEvent.ast, { definitions, definitionPath: "#/components/schemas/", target: "openApi3.1" })
spec.components.schemas = { ...definitions, ...spec.components.schemas }
writeFileSync(new URL("../src/api/openapi.json", import.meta.url), JSON.stringify(spec, null, 2))
