import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { type ConfigDocument, Configuration } from "@botrelay/core"
// In scope so that the inferred type of `ConfigLive` can name the services the handlers need.
import type { AuditLog as _AuditLog } from "@botrelay/core"
import { Effect } from "effect"
import { asAdmin } from "./Access.js"
import { Api } from "./Api.js"
import * as ApiError from "./ApiError.js"
import { audited } from "./Audited.js"

/** The core service the handlers call; re-exported so that the type of `Handlers.layer` can name it. */
export { Configuration } from "@botrelay/core"

/** How many changes of each kind an import made, for its audit entry. */
const counts = (diff: ReadonlyArray<ConfigDocument.DiffEntry>) => {
  const count: Record<string, number> = { add: 0, update: 0, delete: 0 }
  for (const entry of diff) count[entry.op] = (count[entry.op] ?? 0) + 1
  return count
}

/**
 * `GET /api/config/export` and `POST /api/config/import`: admins only (403 for operators). A moved revision
 * is 409 `revision_moved`; an import is audited as `config.import` with its counts, a dry run is not.
 */
export const ConfigLive = HttpApiBuilder.group(Api, "config", (handlers) =>
  Effect.map(Configuration.Configuration, (configuration) =>
    handlers
      .handle("export", () => asAdmin(configuration.export))
      .handle("import", ({ payload, urlParams }) => {
        const run = asAdmin(
          configuration.import(payload, { dryRun: urlParams.dry_run, prune: urlParams.prune }).pipe(
            Effect.catchTag("RevisionMoved", (e) =>
              Effect.fail(new ApiError.Conflict({ error: e.message, code: "revision_moved" })))
          )
        )
        return urlParams.dry_run ? run : audited(
          "config.import",
          { target_type: "config", details: { prune: urlParams.prune } },
          run,
          (result) => ({ target_id: result.revision, details: { prune: urlParams.prune, ...counts(result.diff) } })
        )
      })))
