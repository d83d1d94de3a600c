import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"

const Id = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.positive(),
  Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)
)

/** An event id: a non-negative decimal integer. */
const EventId = (name: string) =>
  Schema.NumberFromString.pipe(
    Schema.int({ message: () => `${name} must be a non-negative integer` }),
    Schema.between(0, Number.MAX_SAFE_INTEGER, { message: () => `${name} must be a non-negative integer` })
  ).annotations({ message: () => `${name} must be a non-negative integer` })

/** Query of `GET /api/events`. */
export const EventsQuery = Schema.Struct({
  bot_id: Schema.optionalWith(Id.annotations({ message: () => "bot_id must be a positive integer" }), { exact: true }),
  chat_id: Schema.optionalWith(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER))
      .annotations({ message: () => "chat_id must be an integer" }),
    { exact: true }
  ),
  last_event_id: Schema.optionalWith(EventId("last_event_id"), { exact: true })
})

/** Headers of `GET /api/events`: `Last-Event-ID`, which browsers send when an EventSource reconnects. */
export const EventsHeaders = Schema.Struct({
  "last-event-id": Schema.optionalWith(EventId("Last-Event-ID"), { exact: true })
})

/** The event stream, as its OpenAPI document shows it. */
export const EventStream = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description: "Server-sent events: `id: <n>`, `event: <name>` (message, message_edited, message_deleted, chat, bot, " +
    "delivery, reset) and `data: <JSON>` ({type, bot_id, chat_id, message | chat | bot | delivery}), and a " +
    "`: heartbeat` comment every 15 s. The stream does not end by itself."
})

/**
 * Live events (`GET /api/events`); the `Authorization` middleware is added where the API is put together,
 * as this module is imported by it.
 */
export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("stream", "/events")
      .setUrlParams(EventsQuery)
      .setHeaders(EventsHeaders)
      .addSuccess(EventStream)
      .annotate(OpenApi.Summary, "Live events of the bots in the key's scope (server-sent events)")
      .annotate(
        OpenApi.Description,
        "Replays what came after `Last-Event-ID` (or `last_event_id`) from the event log, then streams live " +
          "events; `event: reset` when the log no longer reaches back to that id (reload, then read on)."
      )
  )
{}
