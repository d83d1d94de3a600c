import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type AuditLog, Bots, EventLog, type LiveEvent, Metrics } from "@botrelay/core"
import { Chunk, Context, Effect, type Fiber, FiberId, type Layer, Option, Stream } from "effect"
import { Api, type Authorization, Caller, type CallerInfo } from "./Api.js"
import { mayInChat, mayOnBot, orDomain, requireBot, requireChat } from "./Access.js"

/**
 * Closes the connection under a request at once. The host provides it where it can (the node front does);
 * without it a stream that is cut off ends its response, and the connection closes once the client has
 * read what was already written.
 */
export class Disconnect extends Context.Tag("@botrelay/http/Disconnect")<
  Disconnect,
  (request: HttpServerRequest.HttpServerRequest) => void
>() {}

const encoder = new TextEncoder()

/** The SSE text of a frame; an event's text is made once, whichever streams send it. */
const texts = new WeakMap<EventLog.Frame, string>()

const heartbeat = ": heartbeat\n\n"

const resetData = JSON.stringify({ type: "reset" })

const textOf = (frame: EventLog.Frame): string => {
  if (frame._tag === "Heartbeat") return heartbeat
  let text = texts.get(frame)
  if (text === undefined) {
    text = frame._tag === "Reset"
      ? `id: ${frame.id}\nevent: reset\ndata: ${resetData}\n\n`
      : `id: ${frame.id}\nevent: ${frame.name}\ndata: ${frame.data}\n\n`
    texts.set(frame, text)
  }
  return text
}

/** Frames as the bytes of one write per chunk. */
export const encode = (frames: Chunk.Chunk<EventLog.Frame>): Chunk.Chunk<Uint8Array> => {
  let text = ""
  for (const frame of frames) text += textOf(frame)
  return text === "" ? Chunk.empty() : Chunk.of(encoder.encode(text))
}

/**
 * Whether an operator gets an event: `bot` events with configure or a bot-wide entry; `delivery` events
 * (and others of no chat) with read on the whole bot; chat events with read in that chat.
 */
const visibleTo = (caller: CallerInfo, entry: LiveEvent.NewLogEntry): boolean =>
  entry.type === "bot"
    ? caller.scopes.some((e) => e.bot_id === entry.bot_id && (e.chat_ids.length === 0 || e.abilities.includes("configure")))
    : entry.type === "delivery" || entry.chat_id === 0
    ? mayOnBot(caller, entry.bot_id, "read")
    : mayInChat(caller, entry.bot_id, entry.chat_id, "read")

/**
 * `GET /api/events`: the caller's events (one bot's with `bot_id`, one chat's with `chat_id`) as server-sent events,
 * replayed from `Last-Event-ID` (the header, else `last_event_id`). A stream cut off for falling behind ends
 * the request and closes its connection.
 */
export const layer: Layer.Layer<
  HttpApiGroup.ApiGroup<"botrelay", "events">,
  never,
  EventLog.EventLog | Bots.Bots | AuditLog.AuditLog | Authorization
> =
  HttpApiBuilder.group(Api, "events", (handlers) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const bots = yield* Bots.Bots
    const disconnect = yield* Effect.serviceOption(Disconnect)
    return handlers.handle("stream", ({ headers, urlParams }) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        if (urlParams.bot_id !== undefined) {
          yield* urlParams.chat_id === undefined
            ? requireBot(urlParams.bot_id)
            : requireChat(urlParams.bot_id, urlParams.chat_id, "read")
          yield* bots.get(urlParams.bot_id)
        }
        const request = yield* HttpServerRequest.HttpServerRequest
        /** The request's fiber: it also writes the response, so interrupting it ends the stream's writing. */
        const fiber = yield* Effect.withFiberRuntime<Fiber.RuntimeFiber<unknown, unknown>>((current) =>
          Effect.succeed(current)
        )
        const cutOff = Effect.sync(() => {
          if (Option.isSome(disconnect)) disconnect.value(request)
          fiber.unsafeInterruptAsFork(FiberId.none)
        })
        const frames = log.stream({
          bots: urlParams.bot_id !== undefined ? [urlParams.bot_id] : caller.role === "admin" ? undefined : caller.bot_ids,
          chatId: urlParams.chat_id,
          notes: caller.type === "account",
          visible: caller.role === "admin" ? undefined : (entry) => visibleTo(caller, entry),
          lastEventId: headers["last-event-id"] ?? urlParams.last_event_id,
          onCutOff: cutOff
        })
        const counted = Stream.unwrapScoped(
          Effect.as(Effect.acquireRelease(Metrics.sseClient(1), () => Metrics.sseClient(-1)), frames)
        )
        return HttpServerResponse.stream(Stream.mapChunks(counted, encode), {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
        })
      }).pipe(Effect.catchAll(orDomain)))
  }))
