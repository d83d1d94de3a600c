import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { AuditLog } from "@botrelay/core"
import { Effect } from "effect"
import { asAdmin } from "./Access.js"
import { Api } from "./Api.js"

/** The core service the handler calls; re-exported so that the type of `Handlers.layer` can name it. */
export { AuditLog } from "@botrelay/core"

/** `GET /api/audit`: admins only (403 for operators); a malformed filter, range, `limit` or `cursor` is a 400. */
export const AuditLive = HttpApiBuilder.group(Api, "audit", (handlers) =>
  Effect.map(AuditLog.AuditLog, (audit) => handlers.handle("list", ({ urlParams }) => asAdmin(audit.list(urlParams)))))
