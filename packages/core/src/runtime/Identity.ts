import { HttpExchange } from "@botrelay/telegram"
import { Context, Effect, Layer, ParseResult, Schema } from "effect"
import { InvalidInput } from "../domain/Errors.js"
import { InstanceId } from "../domain/Status.js"
import { nowIso } from "../internal/Time.js"

/** Which instance this is: its id and when it started. */
export interface IdentityInfo {
  /** Carried by every HTTP answer as `X-Botrelay-Instance`. */
  readonly id: string
  /** ISO 8601. */
  readonly started_at: string
  /** The Botrelay version it runs (the host's package version). */
  readonly version: string
}

/** This instance's identity. */
export class Identity extends Context.Tag("@botrelay/core/Identity")<Identity, IdentityInfo>() {}

/** The header every HTTP answer carries the instance id in. */
export const header = "X-Botrelay-Instance"

/** A new id: `i-` and 8 random hexadecimal characters. */
export const generateId: Effect.Effect<string> = Effect.sync(() =>
  `i-${Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0")).join("")}`
)

const decodeId = Schema.decodeUnknown(InstanceId)

/** The version an instance reports when its host names none. */
export const unknownVersion = "0.0.0"

/**
 * The identity with `id` (a new random one when omitted) running `version`, started now; fails when `id` is
 * not a valid instance id.
 */
export const make = (id?: string, version: string = unknownVersion): Effect.Effect<IdentityInfo, InvalidInput> =>
  Effect.gen(function*() {
    const chosen = id === undefined
      ? yield* generateId
      : yield* decodeId(id).pipe(
        Effect.mapError((e) =>
          InvalidInput.field("instance_id", ParseResult.ArrayFormatter.formatErrorSync(e)[0]?.message ?? "invalid")
        )
      )
    return { id: chosen, started_at: yield* nowIso, version }
  })

/** The identity as a layer; see `make`. */
export const layer = (id?: string, version?: string): Layer.Layer<Identity, InvalidInput> =>
  Layer.effect(Identity, make(id, version))

/** The `User-Agent` of the instance's own calls (Bot API, backends): `botrelay (<instance id>)`. */
export const userAgent = (info: IdentityInfo): string => `botrelay (${info.id})`

/** The HTTP client with every request that names no `user-agent` sent with this instance's `userAgent`. */
export const identifiedCalls: Layer.Layer<HttpExchange.HttpExchange, never, HttpExchange.HttpExchange | Identity> =
  Layer.effect(
    HttpExchange.HttpExchange,
    Effect.gen(function*() {
      const client = yield* HttpExchange.HttpExchange
      const agent = userAgent(yield* Identity)
      /** The headers with the agent, made once per headers object: the hot callers reuse theirs. */
      const withAgent = new WeakMap<HttpExchange.Request["headers"], HttpExchange.Request["headers"]>()
      const identified = (request: HttpExchange.Request): HttpExchange.Request => {
        if (request.headers["user-agent"] !== undefined) return request
        let headers = withAgent.get(request.headers)
        if (headers === undefined) {
          headers = { ...request.headers, "user-agent": agent }
          withAgent.set(request.headers, headers)
        }
        return { ...request, headers }
      }
      const send = client.send
      return {
        exchange: (request) => client.exchange(identified(request)),
        send: send === undefined ? undefined : (request, callback) => send(identified(request), callback)
      }
    })
  )
