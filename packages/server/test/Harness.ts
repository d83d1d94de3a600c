import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HttpServer } from "@effect/platform"
import { Supervisor } from "@botrelay/core"
import { eventually, type FakeTelegram, PgCluster } from "@botrelay/testing"
import type { UserFromGetMe } from "grammy/types"
import type { Botrelay } from "@botrelay/node"
import { Duration, type Effect, Layer, Logger, LogLevel, ManagedRuntime, Tracer } from "effect"
import { afterAll, assert } from "vitest"
import * as Config from "../src/Config.js"
import * as Main from "../src/Main.js"

/** A Telegram API root where nothing listens. */
export const unreachableTelegram = "http://127.0.0.1:9"

/** The real server, in-process, on 127.0.0.1 port 0 with SQLite in a temp dir (or PostgreSQL: `onPostgres`). */
export interface TestServer {
  readonly baseUrl: string
  readonly adminKey: string
  readonly dir: string
  /** Every log line the server wrote, as JSON. */
  readonly logs: Array<string>
  readonly call: (
    path: string,
    init?: { readonly method?: string; readonly body?: unknown; readonly key?: string | null; readonly raw?: string }
  ) => Promise<Reply>
  /** Runs an effect on the server's own services (e.g. to record audit entries). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Botrelay.Services>) => Promise<A>
  readonly close: () => Promise<void>
}

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

export { eventually }

/** A fetched answer read whole: its JSON when it is JSON. */
export const replyOf = async (response: Response): Promise<Reply> => {
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** Asserts an error answer: its status, its `code`, and a non-empty `error` sentence. */
export const assertError = (reply: { readonly status: number; readonly json: any }, status: number, code: string) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.json))
  assert.strictEqual(reply.json?.code, code)
  assert.isString(reply.json.error)
  assert.isAbove(reply.json.error.length, 0)
}

/** Runtime timings for tests: retries from 50 ms, dead-lettering after 2 s, short long polls. */
export const fastRuntime: Supervisor.Options = {
  ingress: { ...Supervisor.defaults.ingress, pollSeconds: 5, retryBase: "50 millis", retryCap: "500 millis" },
  outbox: { ...Supervisor.defaults.outbox, timeout: "2 seconds", retryBase: "50 millis", retryCap: "200 millis", maxAge: "2 seconds" }
}

export const newKey = () => `brk_${randomBytes(32).toString("base64url")}`

/**
 * `BOTRELAY_TEST_DATABASE=postgres`: the servers of a test file run on PostgreSQL (one throwaway cluster per
 * file, a database per data dir) instead of SQLite files.
 */
export const onPostgres = process.env["BOTRELAY_TEST_DATABASE"] === "postgres"

const postgresKey = "5".repeat(64)
let cluster: Promise<PgCluster.Cluster> | undefined
const postgresDatabases = new Map<string, string>()

if (onPostgres && !PgCluster.available) {
  throw new Error(`BOTRELAY_TEST_DATABASE=postgres: ${PgCluster.unavailableReason}`)
}
afterAll(async () => {
  await (await cluster)?.stop()
})

/** A storage driver a test server runs on. */
export type Storage = "sqlite" | "postgres"

/**
 * The drivers a test that must hold on both runs on: SQLite, and PostgreSQL where Debian's binaries are
 * installed (`.ci/run` installs them). Use with `describe.each(storages)`; pass the storage to `startServer`.
 */
export const storages: ReadonlyArray<Storage> = PgCluster.available ? ["sqlite", "postgres"] : ["sqlite"]
if (!PgCluster.available) console.warn(`tests on both drivers run on SQLite only: ${PgCluster.unavailableReason}`)

/** The PostgreSQL database of a data dir, made on first use. */
const postgresDatabase = async (dir: string): Promise<string> => {
  const known = postgresDatabases.get(dir)
  if (known !== undefined) return known
  cluster ??= PgCluster.start()
  const url = await (await cluster).createDatabase()
  postgresDatabases.set(dir, url)
  return url
}

/** What `startServer` takes. */
export type ServerOptions = NonNullable<Parameters<typeof startServer>[0]>

export const startServer = async (
  options: {
    readonly telegramApi?: string
    readonly botToken?: string
    /** Extra layers for the server, e.g. a recording tracer. */
    readonly extra?: Layer.Layer<never>
    /** Runtime timings; by default short, so retries and dead-lettering happen within a test. */
    readonly runtime?: Supervisor.Options
    /** The port to listen on; 0 (any free port) by default. */
    readonly port?: number
    /** BOTRELAY_PUBLIC_URL; unset by default. */
    readonly publicUrl?: string
    /** BOTRELAY_BUFFER_MAX_UPDATES and BOTRELAY_BUFFER_MAX_AGE; the defaults when unset. */
    readonly bufferMaxUpdates?: number
    readonly bufferMaxAge?: string
    /** The data dir of an earlier server, to start again on its database; the caller removes it. */
    readonly dir?: string
    /** More flags, e.g. `{ "llm-model": "m" }`; `api-rate-limit` is 0 (no limit) unless set here. */
    readonly flags?: Readonly<Record<string, string>>
    /** BOTRELAY_BACKEND_ALLOW_PRIVATE, for tests whose backends set through /tgapi listen on 127.0.0.1. */
    readonly allowPrivateBackends?: boolean
    /** A PostgreSQL database (URL) to share with other servers; the caller drops it. */
    readonly database?: string
    /** BOTRELAY_INSTANCE_ID; a random one by default. */
    readonly instanceId?: string
    /** BOTRELAY_ADMIN_KEY; a new one by default. */
    readonly adminKey?: string
    /** More environment variables the configuration reads, e.g. `OTEL_EXPORTER_OTLP_ENDPOINT`. */
    readonly env?: Readonly<Record<string, string>>
    /** The driver: PostgreSQL under `BOTRELAY_TEST_DATABASE=postgres`, else SQLite, unless set here. */
    readonly storage?: Storage
    /** The least level that is logged (all by default). */
    readonly logLevel?: LogLevel.LogLevel
  } = {}
) => {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "botrelay-test-"))
  const adminKey = options.adminKey ?? newKey()
  const runtimeOptions = options.runtime ?? fastRuntime
  // BOTRELAY_DELIVERY_MAX_AGE carries the runtime's dead-letter window (2 s in fastRuntime)
  const deliveryMaxAge = Math.max(1, Math.ceil(Duration.toSeconds(Duration.decode(runtimeOptions.outbox.maxAge))))
  const postgres = options.database !== undefined || (options.storage ?? (onPostgres ? "postgres" : "sqlite")) === "postgres"
  const config = Config.fromValues({
    port: String(options.port ?? 0),
    host: "127.0.0.1",
    database: options.database ?? (postgres ? await postgresDatabase(dir) : join(dir, "botrelay.db")),
    "telegram-api": options.telegramApi ?? unreachableTelegram,
    "admin-key": adminKey,
    "log-level": "trace",
    ...(options.botToken === undefined ? {} : { token: options.botToken }),
    ...(options.publicUrl === undefined ? {} : { "public-url": options.publicUrl }),
    ...(options.bufferMaxUpdates === undefined ? {} : { "buffer-max-updates": String(options.bufferMaxUpdates) }),
    ...(options.bufferMaxAge === undefined ? {} : { "buffer-max-age": options.bufferMaxAge }),
    ...(options.allowPrivateBackends === true ? { "backend-allow-private": "true" } : {}),
    "delivery-max-age": String(deliveryMaxAge),
    ...(options.instanceId === undefined ? {} : { "instance-id": options.instanceId }),
    // tests fire many /api calls at once; RateLimit.test.ts sets its own limits
    "api-rate-limit": "0",
    ...options.flags
  }, { ...options.env, ...(postgres ? { BOTRELAY_SECRET_KEY: postgresKey } : {}) })
  const logs: Array<string> = []
  const capture = Logger.map(Logger.jsonLogger, (line) => void logs.push(line))
  const runtime = ManagedRuntime.make(
    Main.layer(config, runtimeOptions).pipe(
      Layer.provide(Layer.mergeAll(
        Logger.replace(Logger.defaultLogger, capture),
        Logger.minimumLogLevel(options.logLevel ?? LogLevel.All),
        options.extra ?? Layer.empty
      ))
    )
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const address = server.address as HttpServer.TcpAddress
  const baseUrl = `http://127.0.0.1:${address.port}`
  const call: TestServer["call"] = async (path, init = {}) => {
    const headers: Record<string, string> = {}
    const key = init.key === undefined ? adminKey : init.key
    if (key !== null) headers.authorization = `Bearer ${key}`
    let body: string | undefined = init.raw
    if (init.body !== undefined) {
      body = JSON.stringify(init.body)
      headers["content-type"] = "application/json"
    } else if (init.raw !== undefined) {
      headers["content-type"] = "application/json"
    }
    const response = await fetch(`${baseUrl}${path}`, {
      method: init.method ?? (body === undefined ? "GET" : "POST"),
      headers,
      ...(body === undefined ? {} : { body })
    })
    return replyOf(response)
  }
  return {
    baseUrl,
    adminKey,
    dir,
    logs,
    call,
    run: (effect) => runtime.runPromise(effect),
    close: async () => {
      await runtime.dispose()
      if (options.dir === undefined) {
        rmSync(dir, { recursive: true, force: true })
        const url = postgresDatabases.get(dir)
        if (url !== undefined) {
          postgresDatabases.delete(dir)
          await (await cluster!).dropDatabase(url)
        }
      }
    }
  } satisfies TestServer
}

/** A tracer that keeps every span's name and attributes, for checking what spans carry. */
export const recordingTracer = () => {
  const spans: Array<{ readonly name: string; readonly attributes: Map<string, unknown> }> = []
  let next = 0
  const tracer = Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      const attributes = new Map<string, unknown>()
      spans.push({ name, attributes })
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: `span${++next}`,
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes,
        links: [...links],
        sampled: true,
        kind,
        end() {},
        attribute(key, value) {
          attributes.set(key, value)
        },
        event(name, _startTime, eventAttributes) {
          attributes.set(`event.${name}`, eventAttributes)
        },
        addLinks() {}
      }
      return span
    },
    context: (f) => f()
  })
  return { spans, layer: Layer.setTracer(tracer) }
}

/**
 * A tracer that counts, per bot, the long polls the server holds (open `LongPoll.getUpdates` spans), so a test
 * waits for a poll to be held instead of sleeping. Pass `layer` as `startServer`'s `extra`.
 */
export const pollWatch = () => {
  const open = new Map<number, number>()
  const tracer = Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      let botId: number | undefined
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: "span",
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: new Map(),
        links: [...links],
        sampled: true,
        kind,
        end() {
          if (botId !== undefined) open.set(botId, open.get(botId)! - 1)
        },
        attribute(key, value) {
          if (name !== "LongPoll.getUpdates" || key !== "bot_id") return
          botId = Number(value)
          open.set(botId, (open.get(botId) ?? 0) + 1)
        },
        event() {},
        addLinks() {}
      }
      return span
    },
    context: (f) => f()
  })
  return {
    layer: Layer.setTracer(tracer),
    held: (botId: number) => open.get(botId) ?? 0,
    /** Resolves once the server holds exactly `count` polls of the bot. */
    untilHeld: (botId: number, count = 1) => eventually(() => (open.get(botId) ?? 0) === count || undefined)
  }
}

/** The `getMe` answer for a fake bot, so the frameworks never call getMe. */
export const botInfo = (tg: FakeTelegram.FakeBot): UserFromGetMe => ({
  id: tg.id,
  is_bot: true,
  first_name: tg.first_name,
  username: tg.username,
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  can_connect_to_business: false,
  has_main_web_app: false,
  has_topics_enabled: false,
  allows_users_to_create_topics: false,
  can_manage_bots: false,
  supports_join_request_queries: false
})

/**
 * Two servers, instances `a` and `b`, sharing one database of a new throwaway PostgreSQL cluster; `close` stops
 * both and the cluster.
 */
export const startTwoInstances = async (options: Omit<ServerOptions, "database" | "instanceId" | "storage">) => {
  const cluster = await PgCluster.start()
  const database = await cluster.createDatabase()
  const [a, b] = await Promise.all([
    startServer({ ...options, database, instanceId: "a" }),
    startServer({ ...options, database, instanceId: "b" })
  ])
  return {
    a,
    b,
    database,
    close: async () => {
      await Promise.all([a.close(), b.close()])
      await cluster.stop()
    }
  }
}
