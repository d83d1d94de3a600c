// Writes the API's OpenAPI document (from the http package's HttpApi contract) for openapi-typescript.
import { writeFileSync } from "node:fs"
import { URL } from "node:url"
import { OpenApi } from "@effect/platform"
import { Api } from "@botrelay/http"

writeFileSync(new URL("../src/api/openapi.json", import.meta.url), JSON.stringify(OpenApi.fromApi(Api.Api), null, 2))
