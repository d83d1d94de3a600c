import { ApiKey, ApiKeys, Bot, Bots, ChatTag, Message, Messages, Outgoing, Route, Routes, RouteSend, Tags } from "@botrelay/core"
import { Api, ApiError } from "@botrelay/http"
import { Cause, Effect, Exit, Option, ParseResult, Schema } from "effect"
import * as Instance from "./Instance.js"
import type * as NodeHandler from "./NodeHandler.js"

/** One field that failed validation, as the API's 400 lists it. */
export interface FieldIssue {
  readonly path: string
  readonly message: string
}

/** A failure as the HTTP API would answer it: its message, `code` and HTTP `status`. Never carries secrets. */
export class BotrelayError extends Error {
  override readonly name = "BotrelayError"
  /** The API's error code, e.g. `invalid_request`, `bot_not_found`, `duplicate_token`. */
  readonly code: string
  /** The HTTP status the API would answer with. */
  readonly status: number
  /** The fields that failed validation, for `invalid_request`. */
  readonly details?: ReadonlyArray<FieldIssue>

  constructor(options: {
    readonly message: string
    readonly code: string
    readonly status: number
    readonly details?: ReadonlyArray<FieldIssue> | undefined
  }) {
    super(options.message)
    this.code = options.code
    this.status = options.status
    if (options.details !== undefined) this.details = options.details
  }
}

/** The JSON form of a schema's values: what the API reads and answers. */
type Json<S extends Schema.Schema.Any> = S["Encoded"]

/** An API query with numbers for the parameters it reads as numbers from the query string. */
export type Query<S extends Schema.Schema.Any> = {
  readonly [K in keyof S["Encoded"]]: string extends S["Encoded"][K] ? number : S["Encoded"][K]
}

/** A Botrelay instance behind Promises taking and returning the HTTP API's JSON, checked by the same schemas. */
export interface Botrelay {
  /** Serves `/api`, `/tgapi`, the webhook ingress and the console under the prefix; mount it with `Adapters`. */
  readonly handler: NodeHandler.Handler
  /** `/api/bots`. */
  readonly bots: {
    readonly add: (input: Json<typeof Bot.NewBot>) => Promise<Json<typeof Bot.BotView>>
    readonly list: () => Promise<ReadonlyArray<Json<typeof Bot.BotView>>>
    readonly get: (id: number) => Promise<Json<typeof Bot.BotView>>
    readonly update: (input: Json<typeof Bot.BotUpdate>) => Promise<Json<typeof Bot.BotView>>
    readonly toggleDisabled: (id: number) => Promise<Json<typeof Bot.BotView>>
    readonly remove: (id: number) => Promise<Json<typeof Bot.BotView>>
  }
  /** `/api/routes`. */
  readonly routes: {
    readonly add: (input: Json<typeof Route.NewRoute>) => Promise<Json<typeof Route.Route>>
    /** Routes by id; with a bot id, those where it is source or target. */
    readonly list: (botId?: number) => Promise<ReadonlyArray<Json<typeof Route.Route>>>
    readonly update: (input: Json<typeof Route.RouteUpdate>) => Promise<Json<typeof Route.Route>>
    readonly remove: (id: number) => Promise<Json<typeof Route.Route>>
    /** Route sends newest first. */
    readonly sends: (filter?: Query<typeof Api.SendsQuery>) => Promise<ReadonlyArray<Json<typeof RouteSend.RouteSend>>>
  }
  /** `/api/messages`. */
  readonly messages: {
    readonly send: (input: Json<typeof Message.SendMessage>) => Promise<Json<typeof Message.Message>>
    /** A page of one chat's history, newest first. */
    readonly list: (query: Query<typeof Api.MessagesQuery>) => Promise<ReadonlyArray<Json<typeof Message.Message>>>
  }
  /** `/api/tags`. */
  readonly tags: {
    readonly add: (input: Json<typeof ChatTag.NewTag>) => Promise<Json<typeof ChatTag.Tag>>
    /** A chat's tags, optionally of one user and of one bot. */
    readonly list: (chatId: number, userId?: number, botId?: number) => Promise<ReadonlyArray<Json<typeof ChatTag.Tag>>>
    readonly remove: (id: number) => Promise<Json<typeof ChatTag.Tag>>
  }
  /** `/api/auth/api-keys`. */
  readonly apiKeys: {
    /** The new key with its secret (`key`), which is shown this once. */
    readonly create: (input: Json<typeof ApiKey.NewApiKey>) => Promise<Json<typeof ApiKey.CreatedApiKey>>
    readonly list: () => Promise<ReadonlyArray<Json<typeof ApiKey.ApiKey>>>
    readonly toggle: (id: number) => Promise<Json<typeof ApiKey.ApiKey>>
    readonly remove: (id: number) => Promise<Json<typeof ApiKey.ApiKey>>
  }
  /** Stops polling and deliveries and closes storage; later calls fail with code `closed`. Safe to call twice. */
  readonly close: () => Promise<void>
}

const Id = Bot.BotUpdate.fields.id
const TagsQuery = Schema.Struct({
  chat_id: ChatTag.NewTag.fields.chat_id,
  user_id: Schema.optional(ChatTag.NewTag.fields.user_id),
  bot_id: Schema.optional(ChatTag.NewTag.fields.bot_id)
})

const decode = <A, I>(schema: Schema.Schema<A, I>, input: unknown) => Schema.decodeUnknown(schema)(input)

/** Decodes a query as the API does, its numbers given as the strings a query string would carry. */
const decodeQuery = <A, I>(schema: Schema.Schema<A, I>, query: object | undefined) =>
  decode(
    schema,
    typeof query === "object" && query !== null
      ? Object.fromEntries(
        Object.entries(query).map(([key, value]) => [key, typeof value === "number" ? String(value) : value])
      )
      : query ?? {}
  )

/** A schema violation as the API's 400 gives it. */
const invalidRequest = (error: ParseResult.ParseError) =>
  ApiError.invalidRequest(ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message
  })))

const internalError = new ApiError.InternalServerError({ error: "internal error", code: "internal_error" })

const toBotrelayError = (e: ApiError.ApiError) =>
  new BotrelayError({ message: e.error, code: e.code, status: ApiError.status[e._tag], details: e.details })

const closedError = () =>
  new BotrelayError({ message: "this Botrelay instance is closed", code: "closed", status: 503 })

/** Starts an instance (see `Instance.create`) and wraps it in the Promise facade. */
export const createBotrelay = async (options: Instance.Options): Promise<Botrelay> => {
  const instance = await Instance.create(options)
  const { apiKeys, bots, messages, routes, tags } = await instance.runtime.runPromise(Effect.all({
    bots: Bots.Bots,
    routes: Routes.Routes,
    messages: Messages.Messages,
    tags: Tags.Tags,
    apiKeys: ApiKeys.ApiKeys
  })).catch(async (error) => {
    await instance.dispose()
    throw error
  })
  let closing: Promise<void> | undefined

  /** Runs `effect` on the instance; answers its result as JSON, or rejects with the error the API would give. */
  const run = async <A, I, E extends ApiError.DomainError | ParseResult.ParseError>(
    success: Schema.Schema<A, I>,
    effect: Effect.Effect<A, E>
  ): Promise<I> => {
    if (closing !== undefined) throw closedError()
    const exit = await instance.runtime.runPromiseExit(effect.pipe(
      Effect.catchAll((e) => ParseResult.isParseError(e) ? Effect.fail(invalidRequest(e)) : ApiError.fromDomain(e)),
      Effect.flatMap((a) => Effect.orDie(Schema.encode(success)(a))),
      Effect.catchAllDefect((defect) =>
        Effect.logError("unhandled failure", defect).pipe(Effect.zipRight(Effect.fail(internalError)))
      )
    ))
    if (Exit.isSuccess(exit)) return exit.value
    throw Option.match(Option.filter(Cause.failureOption(exit.cause), ApiError.isApiError), {
      onNone: closedError,
      onSome: toBotrelayError
    })
  }

  const id = (value: number) => decode(Id, value)
  const optionalId = (value: number | undefined) => value === undefined ? Effect.succeed(undefined) : id(value)

  return {
    handler: instance.handler,
    bots: {
      add: (input) => run(Bot.BotView, Effect.flatMap(decode(Bot.NewBot, input), bots.add).pipe(Effect.map(Bot.view))),
      list: () => run(Schema.Array(Bot.BotView), Effect.map(bots.list, (all) => all.map(Bot.view))),
      get: (botId) => run(Bot.BotView, Effect.flatMap(id(botId), bots.get).pipe(Effect.map(Bot.view))),
      update: (input) =>
        run(Bot.BotView, Effect.flatMap(decode(Bot.BotUpdate, input), bots.update).pipe(Effect.map(Bot.view))),
      toggleDisabled: (botId) =>
        run(Bot.BotView, Effect.flatMap(id(botId), bots.toggleDisabled).pipe(Effect.map(Bot.view))),
      remove: (botId) => run(Bot.BotView, Effect.flatMap(id(botId), bots.remove).pipe(Effect.map(Bot.view)))
    },
    routes: {
      add: (input) => run(Route.Route, Effect.flatMap(decode(Route.NewRoute, input), routes.add)),
      list: (botId) => run(Schema.Array(Route.Route), Effect.flatMap(optionalId(botId), routes.list)),
      update: (input) => run(Route.Route, Effect.flatMap(decode(Route.RouteUpdate, input), routes.update)),
      remove: (routeId) => run(Route.Route, Effect.flatMap(id(routeId), routes.remove)),
      sends: (filter) =>
        run(Schema.Array(RouteSend.RouteSend), Effect.flatMap(decodeQuery(Api.SendsQuery, filter), routes.sends))
    },
    messages: {
      send: (input) =>
        run(
          Message.Message,
          Effect.flatMap(decode(Message.SendMessage, input), messages.send).pipe(
            Effect.catchIf(
              (e): e is Outgoing.DeliveryFailed | Outgoing.DeliveryUnknown =>
                e._tag === "DeliveryFailed" || e._tag === "DeliveryUnknown",
              (e) => Effect.fail(Outgoing.toTelegramError("sendMessage", e))
            )
          )
        ),
      list: (query) =>
        run(Schema.Array(Message.Message), Effect.flatMap(decodeQuery(Api.MessagesQuery, query), messages.list))
    },
    tags: {
      add: (input) =>
        run(
          ChatTag.Tag,
          Effect.flatMap(decode(ChatTag.NewTag, input), (tag) =>
            Effect.asVoid(bots.get(tag.bot_id)).pipe(Effect.zipRight(tags.add(tag))))
        ),
      list: (chatId, userId, botId) =>
        run(
          Schema.Array(ChatTag.Tag),
          Effect.flatMap(
            decode(TagsQuery, {
              chat_id: chatId,
              ...(userId === undefined ? {} : { user_id: userId }),
              ...(botId === undefined ? {} : { bot_id: botId })
            }),
            tags.list
          )
        ),
      remove: (tagId) => run(ChatTag.Tag, Effect.flatMap(id(tagId), tags.remove))
    },
    apiKeys: {
      create: (input) => run(ApiKey.CreatedApiKey, Effect.flatMap(decode(ApiKey.NewApiKey, input), apiKeys.create)),
      list: () => run(Schema.Array(ApiKey.ApiKey), apiKeys.list),
      toggle: (keyId) => run(ApiKey.ApiKey, Effect.flatMap(id(keyId), apiKeys.toggle)),
      remove: (keyId) => run(ApiKey.ApiKey, Effect.flatMap(id(keyId), apiKeys.remove))
    },
    close: () => closing ??= instance.dispose()
  }
}
