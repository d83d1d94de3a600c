import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Search } from "@botrelay/core"
// In scope so that the inferred types can name the services the handlers need.
import type { AuditLog as _AuditLog } from "@botrelay/core"
import { Effect } from "effect"
import { orDomain, requireBot, requireChat, scopeOf } from "./Access.js"
import { Api, Caller } from "./Api.js"
import { requireAccount } from "./NotesHandlers.js"

/** The core service the handler calls; re-exported so that the type of `Handlers.layer` can name it. */
export { Search } from "@botrelay/core"

/**
 * `GET /api/search`: admins search every bot (or `bot_id`), operators the bots in their scope (or `bot_id`, 403
 * outside them); an unknown `bot_id` is a 404, a malformed `q`, `cursor` or range a 400. Accounts find messages
 * and notes unless `kinds` says otherwise; API keys find messages (`kinds=note` is 403 `account_required`).
 */
export const SearchLive = HttpApiBuilder.group(Api, "search", (handlers) =>
  Effect.map(Search.Search, (search) =>
    handlers.handle("search", ({ urlParams }) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        if (urlParams.bot_id !== undefined) {
          yield* urlParams.chat_id === undefined
            ? requireBot(urlParams.bot_id)
            : requireChat(urlParams.bot_id, urlParams.chat_id, "read")
        }
        if (urlParams.kinds?.includes("note") === true) yield* requireAccount
        const kinds = urlParams.kinds ?? (caller.type === "account" ? ["message", "note"] as const : ["message"] as const)
        return yield* search.search({ ...urlParams, kinds }, scopeOf(caller))
      }).pipe(Effect.catchAll(orDomain)))))
