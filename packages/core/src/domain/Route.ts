import { Schema } from "effect"
import * as RouteRegex from "../internal/RouteRegex.js"

/** What decides whether a route fires for a message. */
export const ConditionType = Schema.Literal("all", "chat_id", "user_id", "keyword", "regex", "llm")
export type ConditionType = typeof ConditionType.Type

/** What the target bot does with a matching message. */
export const RouteAction = Schema.Literal("forward", "copy", "drop")
export type RouteAction = typeof RouteAction.Type

/** A route from a source bot to a target bot. */
export const Route = Schema.Struct({
  id: Schema.Int,
  source_bot_id: Schema.Int,
  target_bot_id: Schema.Int,
  condition_type: ConditionType,
  condition_value: Schema.String,
  action: RouteAction,
  target_chat_id: Schema.Int,
  enabled: Schema.Boolean,
  description: Schema.String,
  created_at: Schema.String
}).annotations({ identifier: "Route" })
export type Route = typeof Route.Type

const integerList = /^\s*-?\d+\s*(,\s*-?\d+\s*)*$/

/**
 * Checks `condition_value` against its `condition_type` and returns the stored form
 * (lists trimmed and comma-joined), or the reason it is invalid.
 */
export const normalizeCondition = (
  type: ConditionType,
  value: string
): { readonly _tag: "Right"; readonly value: string } | { readonly _tag: "Left"; readonly message: string } => {
  const ok = (value: string) => ({ _tag: "Right" as const, value })
  const fail = (message: string) => ({ _tag: "Left" as const, message })
  if (value.length > 4096) return fail("condition_value must be at most 4096 characters")
  switch (type) {
    case "all":
      return value.trim() === "" ? ok("") : fail("condition_value must be empty when condition_type is all")
    case "chat_id":
    case "user_id": {
      if (!integerList.test(value)) return fail(`condition_value must be one or more comma-separated ${type}s`)
      const ids = value.split(",").map((s) => s.trim())
      if (ids.some((id) => !Number.isSafeInteger(Number(id)))) return fail("condition_value has an id out of range")
      return ok(ids.join(","))
    }
    case "keyword": {
      const words = value.split(",").map((s) => s.trim())
      return words.every((w) => w !== "")
        ? ok(words.join(","))
        : fail("condition_value must be one or more comma-separated keywords, none empty")
    }
    case "regex": {
      if (value === "") return fail("condition_value must be a regular expression")
      const compiled = RouteRegex.compile(value)
      return compiled._tag === "Compiled" ? ok(value) : fail(`condition_value: ${compiled.reason}`)
    }
    case "llm":
      return ok(value.trim())
  }
}

const RouteFields = {
  source_bot_id: Schema.Int.pipe(Schema.positive()),
  target_bot_id: Schema.Int.pipe(Schema.positive()),
  condition_type: Schema.optionalWith(ConditionType, { default: () => "all" as const }),
  condition_value: Schema.optionalWith(Schema.String, { default: () => "" }),
  action: RouteAction,
  target_chat_id: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  description: Schema.optionalWith(
    Schema.String.pipe(Schema.maxLength(4096, { message: () => "description must be at most 4096 characters" })),
    { default: () => "" }
  )
}

const conditionIsValid = <A extends { readonly condition_type: ConditionType; readonly condition_value: string }>(
  route: A
) => {
  const result = normalizeCondition(route.condition_type, route.condition_value)
  return result._tag === "Right" ? true : { path: ["condition_value"], message: result.message }
}

/** Body of `POST /api/routes/add`. `condition_value` is checked against `condition_type`. */
export const NewRoute = Schema.Struct(RouteFields)
  .pipe(Schema.filter(conditionIsValid))
  .annotations({ identifier: "NewRoute" })
export type NewRoute = typeof NewRoute.Type

/** Body of `POST /api/routes/update`: a full replacement of the route with this id. */
export const RouteUpdate = Schema.Struct({ id: Schema.Int.pipe(Schema.positive()), ...RouteFields })
  .pipe(Schema.filter(conditionIsValid))
  .annotations({ identifier: "RouteUpdate" })
export type RouteUpdate = typeof RouteUpdate.Type

/** What storage needs to create or replace a route. */
export type RouteRecordInput = Omit<Route, "id">

/** No route has this id. */
export class RouteNotFound extends Schema.TaggedError<RouteNotFound>()("RouteNotFound", { id: Schema.Int }) {
  override get message() {
    return `route ${this.id} not found`
  }
}
