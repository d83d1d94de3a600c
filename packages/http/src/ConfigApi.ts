import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { ConfigDocument } from "@botrelay/core"
import { Schema } from "effect"

const Flag = (name: string) =>
  Schema.optionalWith(
    Schema.BooleanFromString.annotations({ message: () => ({ message: `${name} must be true or false`, override: true }) }),
    { default: () => false }
  )

/** Query of `POST /api/config/import`. */
export const ImportQuery = Schema.Struct({ dry_run: Flag("dry_run"), prune: Flag("prune") })

/**
 * The configuration as data, for admins: export, and import with a diff. The API adds its authorization
 * middleware (`Api.ts`), which this module cannot import without a cycle.
 */
export class ConfigGroup extends HttpApiGroup.make("config")
  .add(HttpApiEndpoint.get("export", "/export").addSuccess(ConfigDocument.ConfigDocument))
  .add(
    HttpApiEndpoint.post("import", "/import")
      .setUrlParams(ImportQuery)
      .setPayload(ConfigDocument.ConfigDocument)
      .addSuccess(ConfigDocument.ImportResult)
  )
  .prefix("/config")
{}
