import { chmodSync, closeSync, existsSync, openSync, statSync } from "node:fs"
import type { ApiKey, Bot, Delivery, Inbox, LongPoll, Message, Route, RouteSend, Tag } from "@botrelay/core"
import { Bot as BotModule, Errors, Storage } from "@botrelay/core"
import BetterSqlite3 from "better-sqlite3"
import type { Scope } from "effect"
import { Data, Effect, Layer, Option, Redacted } from "effect"
import type { Compilable, Selectable, Updateable } from "kysely"
import {
  DummyDriver,
  Kysely,
  Migrator,
  sql,
  SqliteAdapter,
  SqliteDialect,
  SqliteIntrospector,
  SqliteQueryCompiler
} from "kysely"
import { migrationLockTableName, migrations, migrationTableName } from "./Migrations.js"
import * as SecretKey from "./SecretKey.js"
import type {
  ApiKeysTable,
  BotsTable,
  Database,
  DeliveriesTable,
  InboxTable,
  MessagesTable,
  RouteMappingsTable,
  RouteSendsTable,
  RoutesTable,
  TagsTable
} from "./Tables.js"

/** The part of a better-sqlite3 prepared statement the driver uses. */
export interface SqliteStatement {
  readonly reader: boolean
  all(...parameters: Array<unknown>): Array<unknown>
  run(...parameters: Array<unknown>): { readonly changes: number | bigint; readonly lastInsertRowid: number | bigint }
  iterate(...parameters: Array<unknown>): IterableIterator<unknown>
  raw(toggle?: boolean): SqliteStatement
}

/** The part of a better-sqlite3 `Database` the driver uses; a host's own `new Database(file)` fits. */
export interface SqliteDatabase {
  /** The database's file (better-sqlite3 sets it): the secret key file is looked for beside it. */
  readonly name?: string
  prepare(sql: string): SqliteStatement
  transaction(fn: (...args: Array<any>) => any): (...args: Array<any>) => any
  close(): void
}

/**
 * How secrets are encrypted at rest. Without `secretKey`, the key is read from `secret.key` beside the
 * database file, which is generated (mode 0600) on first start; an in-memory database gets a new key.
 */
export interface KeyOptions {
  readonly secretKey?: SecretKey.SecretKey | undefined
  /** How error messages name where `secretKey` came from (e.g. `BOTRELAY_SECRET_KEY`). */
  readonly secretKeySource?: string | undefined
}

/**
 * Open (and own) the SQLite file at `filename`; `":memory:"` for a private in-memory database. A new
 * file is created with mode 0600 (so are its `-wal` and `-shm`); an existing one is tightened to 0600.
 */
export interface FileOptions extends KeyOptions {
  readonly filename: string
}

/** Use a database the host opened; the driver adds its `botrelay_*` tables and never closes it. */
export interface DatabaseOptions extends KeyOptions {
  readonly database: SqliteDatabase
}

/** Where the storage lives. */
export type Options = FileOptions | DatabaseOptions

/** Why secrets cannot be used; see `SecretKey.SecretKeyError`. */
export type SecretKeyError = SecretKey.SecretKeyError

/** The schema could not be brought up to date. */
export class MigrationError extends Data.TaggedError("MigrationError")<{
  readonly cause: unknown
  readonly migration?: string
}> {
  override get message() {
    return this.migration === undefined
      ? "could not migrate the SQLite database"
      : `could not apply migration ${this.migration} to the SQLite database`
  }
}

type BotRow = Selectable<BotsTable>
type RouteRow = Selectable<RoutesTable>
type TagRow = Selectable<TagsTable>
type ApiKeyRow = Selectable<ApiKeysTable>
type InboxRow = Selectable<InboxTable>
type DeliveryRow = Selectable<DeliveriesTable>
type RouteSendRow = Selectable<RouteSendsTable>
type RouteMappingRow = Selectable<RouteMappingsTable>

const toBotWith = (cipher: SecretKey.Cipher) => (r: BotRow): Bot.StoredBot => ({
  id: r.id,
  token: Redacted.make(cipher.decrypt("token", r.token)),
  name: r.name,
  source: r.source,
  manage_enabled: r.manage_enabled === 1,
  proxy_enabled: r.proxy_enabled === 1,
  backend_url: r.backend_url,
  backend_url_origin: r.backend_url_origin,
  secret_token: Redacted.make(cipher.decrypt("secret_token", r.secret_token)),
  long_poll_enabled: r.long_poll_enabled === 1,
  description: r.description,
  webhook_mode: r.webhook_mode === 1,
  disabled: r.disabled === 1,
  username: r.username,
  last_error: r.last_error,
  last_update_at: r.last_update_at,
  created_at: r.created_at,
  updated_at: r.updated_at
})

const toRoute = (r: RouteRow): Route.Route => ({
  id: r.id,
  source_bot_id: r.source_bot_id,
  target_bot_id: r.target_bot_id,
  condition_type: r.condition_type,
  condition_value: r.condition_value,
  action: r.action,
  target_chat_id: r.target_chat_id,
  enabled: r.enabled === 1,
  description: r.description,
  created_at: r.created_at
})

/** The columns of a message besides its key (bot, chat, id), in the order of `Message`'s fields. */
const messageColumns = [
  "user_id",
  "username",
  "first_name",
  "last_name",
  "text",
  "date",
  "media_type",
  "file_id",
  "reply_to_message_id",
  "direction",
  "edit_date",
  "deleted"
] as const satisfies ReadonlyArray<keyof MessagesTable>

/** The columns of a message page: bot and chat come from the query. */
const pageColumns = ["id", ...messageColumns] as const

/** A message of one chat from a raw row of `pageColumns`; optional fields only when set. */
const toMessage = (botId: number, chatId: number, r: ReadonlyArray<any>): Message.Message => {
  const message: { -readonly [K in keyof Message.Message]: Message.Message[K] } = {
    id: r[0],
    chat_id: chatId,
    bot_id: botId,
    user_id: r[1],
    username: r[2],
    first_name: r[3],
    last_name: r[4],
    text: r[5],
    date: r[6],
    direction: r[10],
    edit_date: r[11],
    deleted: r[12] === 1
  }
  if (r[7] !== null) message.media_type = r[7]
  if (r[8] !== null) message.file_id = r[8]
  if (r[9] !== null) message.reply_to_message_id = r[9]
  return message
}

const toTag = (r: TagRow): Tag.Tag => ({
  id: r.id,
  bot_id: r.bot_id,
  chat_id: r.chat_id,
  user_id: r.user_id,
  username: r.username,
  tag: r.tag,
  color: r.color,
  created_at: r.created_at
})

const toApiKey = (r: ApiKeyRow, botIds: ReadonlyArray<number>): ApiKey.ApiKey => ({
  id: r.id,
  name: r.name,
  role: r.role,
  bot_ids: botIds,
  prefix: r.prefix,
  created_at: r.created_at,
  last_used_at: r.last_used_at,
  enabled: r.enabled === 1
})

const toInboxUpdate = (r: Omit<InboxRow, "processed">): Inbox.InboxUpdate => ({
  bot_id: r.bot_id,
  update_id: r.update_id,
  payload: r.payload,
  received_at: r.received_at
})

const toDelivery = (r: DeliveryRow): Delivery.Delivery => ({
  id: r.id,
  bot_id: r.bot_id,
  update_id: r.update_id,
  url: r.url,
  payload: r.payload ?? "",
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at,
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at
})

const toRouteSend = (r: RouteSendRow & { readonly payload: string | null }): RouteSend.RouteSend => ({
  id: r.id,
  bot_id: r.bot_id,
  kind: r.kind,
  route_id: r.route_id,
  source_bot_id: r.source_bot_id,
  update_id: r.update_id,
  from_chat_id: r.from_chat_id,
  message_id: r.message_id,
  chat_id: r.chat_id,
  reply_to_message_id: r.reply_to_message_id,
  hop: r.hop,
  payload: r.payload ?? "",
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at,
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at
})

const toRouteMapping = (r: RouteMappingRow): RouteSend.RouteMapping => ({
  id: r.id,
  route_id: r.route_id,
  source_bot_id: r.source_bot_id,
  source_chat_id: r.source_chat_id,
  source_message_id: r.source_message_id,
  target_bot_id: r.target_bot_id,
  target_chat_id: r.target_chat_id,
  target_message_id: r.target_message_id,
  hop: r.hop,
  reversible: r.reversible === 1,
  created_at: r.created_at
})

/** A literal, not a bound parameter, so that SQLite can use the partial index on unprocessed updates. */
const unprocessed = sql.lit(0)

/** A delivery's status in the outbox, as a literal so that it is not a parameter of the compiled queries. */
const pending = sql.lit<"pending">("pending")

const bit = (value: boolean): number => value ? 1 : 0

const botTextFields = [
  "name",
  "source",
  "backend_url",
  "backend_url_origin",
  "description",
  "username",
  "last_error",
  "last_update_at",
  "updated_at"
] as const satisfies ReadonlyArray<keyof BotsTable>

const botFlagFields = [
  "manage_enabled",
  "proxy_enabled",
  "long_poll_enabled",
  "webhook_mode",
  "disabled"
] as const satisfies ReadonlyArray<keyof BotsTable>


const isTokenConflict = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "SQLITE_CONSTRAINT_UNIQUE" &&
  "message" in cause && typeof cause.message === "string" && cause.message.includes("botrelay_bots.token_hash")

class TransactionalSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl() {
    return true
  }
}

class MigrationDialect extends SqliteDialect {
  override createAdapter() {
    return new TransactionalSqliteAdapter()
  }
}

const db = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler()
  }
})

const isMemory = (filename: string) => filename === ":memory:" || filename === ""

/**
 * Creates the database file with mode 0600 when it does not exist, and tightens it and its companions
 * (`-wal`, `-shm`, `-journal`) to 0600 when they are wider; returns those it tightened.
 */
const secureFile = (filename: string): Array<string> => {
  closeSync(openSync(filename, "a", 0o600))
  const tightened: Array<string> = []
  for (const file of [filename, `${filename}-wal`, `${filename}-shm`, `${filename}-journal`]) {
    if (!existsSync(file)) continue
    const mode = statSync(file).mode & 0o777
    if ((mode & 0o077) === 0) continue
    chmodSync(file, mode & 0o700)
    tightened.push(`${file} (was ${mode.toString(8).padStart(4, "0")})`)
  }
  return tightened
}

const open = (options: Options): Effect.Effect<SqliteDatabase, Errors.StorageError, Scope.Scope> => {
  if ("database" in options) {
    const database = options.database
    return Effect.try({
      try: () => {
        database.prepare("PRAGMA foreign_keys = ON").run()
        return database
      },
      catch: (cause) => new Errors.StorageError({ operation: "open", cause })
    })
  }
  const secured = isMemory(options.filename) ? Effect.void : Effect.try({
    try: () => secureFile(options.filename),
    catch: (cause) => new Errors.StorageError({ operation: "open", cause })
  }).pipe(Effect.flatMap((tightened) =>
    Effect.forEach(tightened, (file) => Effect.logWarning(`tightened the permissions of ${file} to owner-only`))
  ))
  return Effect.zipRight(secured, Effect.acquireRelease(
    Effect.try({
      try: () => {
        const database = new BetterSqlite3(options.filename)
        try {
          if (options.filename !== ":memory:" && options.filename !== "") database.pragma("journal_mode = WAL")
          database.pragma("synchronous = NORMAL")
          database.pragma("busy_timeout = 5000")
          database.pragma("foreign_keys = ON")
        } catch (cause) {
          database.close()
          throw cause
        }
        return database
      },
      catch: (cause) => new Errors.StorageError({ operation: "open", cause })
    }),
    (database) => Effect.sync(() => database.close())
  ))
}

/** The database's key: the given one, else its key file's (created on first start), else a new one in memory. */
const resolveKey = (options: Options): Effect.Effect<{ key: SecretKey.SecretKey; source: string }, SecretKeyError> =>
  Effect.try({
    try: () => {
      if (options.secretKey !== undefined) {
        return { key: options.secretKey, source: options.secretKeySource ?? "the given secret key" }
      }
      const file = "filename" in options ? options.filename : options.database.name
      if (file === undefined) {
        throw new SecretKey.SecretKeyError({
          reason: "invalid",
          detail: "a secret key is needed: the database's file is unknown, so no key file can be found beside it"
        })
      }
      if (isMemory(file)) return { key: SecretKey.generate(), source: "a key in memory" }
      const path = SecretKey.keyFileFor(file)
      return { key: SecretKey.readOrCreateFile(path), source: `the key file ${path}` }
    },
    catch: (cause) =>
      cause instanceof SecretKey.SecretKeyError
        ? cause
        : new SecretKey.SecretKeyError({ reason: "file", detail: "the secret key could not be read" })
  })

/** Fails unless the database's check value decrypts with this key; a database without one passes. */
const verifyKey = (
  database: SqliteDatabase,
  cipher: SecretKey.Cipher,
  source: string,
  file: string | undefined
): Effect.Effect<void, SecretKeyError | Errors.StorageError> =>
  Effect.try({
    try: () =>
      database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'botrelay_secret_key'").all()
          .length === 0
        ? undefined
        : (database.prepare("SELECT check_value FROM botrelay_secret_key WHERE id = 1").all()[0] as
          | { readonly check_value: string }
          | undefined)?.check_value ?? "",
    catch: (cause) => new Errors.StorageError({ operation: "open", cause })
  }).pipe(Effect.flatMap((check) => {
    if (check === undefined) return Effect.void
    let ok = false
    try {
      ok = cipher.decrypt("check", check) === SecretKey.checkPlaintext
    } catch {
      ok = false
    }
    if (ok) return Effect.void
    const interrupted = file !== undefined && !isMemory(file) && existsSync(`${SecretKey.keyFileFor(file)}.new`)
    return Effect.fail(
      new SecretKey.SecretKeyError({
        reason: "mismatch",
        detail: `the secret key from ${source} does not decrypt this database's secrets; ` +
          "start with the key they were encrypted with" +
          (interrupted
            ? ` (${SecretKey.keyFileFor(file)}.new exists: a key rotation was interrupted after it wrote that key)`
            : "")
      })
    )
  }))

/**
 * Runs `f` with `secure_delete` on, so that what it overwrites (plaintext secrets, secrets under an old
 * key) is zeroed, then moves the WAL into the file and truncates it, so that no old page stays in it.
 */
const overwriting = <A, E>(database: SqliteDatabase, f: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const before = (database.prepare("PRAGMA secure_delete").all()[0] as { secure_delete: number }).secure_delete
      database.prepare("PRAGMA secure_delete = 1").all()
      return before
    }),
    () => f,
    (before) =>
      Effect.sync(() => {
        database.prepare(`PRAGMA secure_delete = ${before === 1 ? 1 : before === 2 ? "FAST" : 0}`).all()
        database.prepare("PRAGMA wal_checkpoint(TRUNCATE)").all()
      })
  )

/** Brings the schema up to date; what 0008 encrypts leaves no plaintext behind (see `overwriting`). */
const migrate = (database: SqliteDatabase, cipher: SecretKey.Cipher): Effect.Effect<void, MigrationError> =>
  overwriting(database, Effect.tryPromise({
    try: () =>
      new Migrator({
        db: new Kysely<unknown>({ dialect: new MigrationDialect({ database }) }),
        provider: { getMigrations: () => Promise.resolve(migrations(cipher)) },
        migrationTableName,
        migrationLockTableName
      }).migrateToLatest(),
    catch: (cause) => new MigrationError({ cause })
  }).pipe(
    Effect.flatMap(({ error, results }) => {
      if (error === undefined) return Effect.void
      const failed = results?.find((r) => r.status === "Error")
      return Effect.fail(
        failed === undefined
          ? new MigrationError({ cause: error })
          : new MigrationError({ cause: error, migration: failed.migrationName })
      )
    })
  ))

/** The key under which a `Query` carries its types; never set. */
declare const shape: unique symbol

/** SQL compiled once from a Kysely builder: runs with positional parameters `P` and gives rows `R`. */
interface Query<P extends ReadonlyArray<unknown>, R> {
  readonly sql: string
  readonly [shape]?: (...parameters: P) => R
}

/**
 * Compiles a query once. `build` gets one placeholder per parameter and must bind each exactly once, in
 * the order of its parameters; constants go in as literals (`sql.lit`, `eb.lit`). Throws otherwise.
 */
const compile = <P extends ReadonlyArray<unknown>, R>(build: (...parameters: P) => Compilable<R>): Query<P, R> => {
  const placeholders = Array.from({ length: build.length }, (_, i) => Symbol(`parameter ${i + 1}`))
  const compiled = build(...(placeholders as ReadonlyArray<unknown> as P)).compile()
  if (
    compiled.parameters.length !== placeholders.length ||
    compiled.parameters.some((parameter, i) => parameter !== placeholders[i])
  ) throw new Error(`the parameters must be bound once each, in order: ${compiled.sql}`)
  return { sql: compiled.sql }
}


/** One chat's messages, newest first: the hottest read, run on a raw statement. */
const messagePageQuery = compile((botId: number, chatId: number, limit: number, offset: number) =>
  db.selectFrom("botrelay_messages").select(pageColumns)
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .orderBy("date", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .offset(offset)
)

const findBotQuery = compile((id: number) => db.selectFrom("botrelay_bots").selectAll().where("id", "=", id))

const findBotByTokenQuery = compile((tokenHash: string) =>
  db.selectFrom("botrelay_bots").selectAll().where("token_hash", "=", tokenHash)
)

/** One message by its key, on a raw statement like the message page. */
const findMessageQuery = compile((botId: number, chatId: number, id: number) =>
  db.selectFrom("botrelay_messages").select(pageColumns)
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("id", "=", id)
)

const ingressOffsetQuery = compile((botId: number) =>
  db.selectFrom("botrelay_ingress").select("offset").where("bot_id", "=", botId)
)

const insertUpdateQuery = compile((botId: number, updateId: number, payload: string, receivedAt: string) =>
  db.insertInto("botrelay_inbox")
    .values({ bot_id: botId, update_id: updateId, payload, received_at: receivedAt, processed: unprocessed })
    .onConflict((oc) => oc.columns(["bot_id", "update_id"]).doNothing())
)

const raiseOffsetQuery = compile((botId: number, offset: number) =>
  db.insertInto("botrelay_ingress").values({ bot_id: botId, offset }).onConflict((oc) =>
    oc.column("bot_id").doUpdateSet((eb) => ({
      offset: eb.fn<number>("max", [eb.ref("botrelay_ingress.offset"), eb.ref("excluded.offset")])
    }))
  )
)

const pendingUpdatesQuery = compile((botId: number, limit: number) =>
  db.selectFrom("botrelay_inbox")
    .select(["bot_id", "update_id", "payload", "received_at"])
    .where("bot_id", "=", botId)
    .where("processed", "=", unprocessed)
    .orderBy("update_id")
    .limit(limit)
)

const markProcessedQuery = compile((botId: number, updateId: number) =>
  db.updateTable("botrelay_inbox")
    .set({ processed: sql.lit(1) })
    .where("bot_id", "=", botId)
    .where("update_id", "=", updateId)
    .where("processed", "=", unprocessed)
)

const saveMessageQuery = compile((
  botId: number,
  chatId: number,
  id: number,
  userId: number,
  username: string,
  firstName: string,
  lastName: string,
  text: string,
  date: number,
  mediaType: string | null,
  fileId: string | null,
  replyToMessageId: number | null,
  direction: "in" | "out",
  editDate: number,
  deleted: number
) =>
  db.insertInto("botrelay_messages").values({
    bot_id: botId,
    chat_id: chatId,
    id,
    user_id: userId,
    username,
    first_name: firstName,
    last_name: lastName,
    text,
    date,
    media_type: mediaType,
    file_id: fileId,
    reply_to_message_id: replyToMessageId,
    direction,
    edit_date: editDate,
    deleted
  }).onConflict((oc) =>
    oc.columns(["bot_id", "chat_id", "id"]).doUpdateSet((eb) =>
      Object.fromEntries(messageColumns.map((column) => [column, eb.ref(`excluded.${column}`)]))
    )
  )
)

const queueDeliveryQuery = compile((
  botId: number,
  updateId: number,
  url: string,
  payload: string,
  nextAttemptAt: string,
  createdAt: string,
  updatedAt: string
) =>
  db.insertInto("botrelay_deliveries").values({
    bot_id: botId,
    update_id: updateId,
    url,
    payload,
    status: pending,
    attempts: sql.lit(0),
    next_attempt_at: nextAttemptAt,
    last_error: sql.lit(""),
    created_at: createdAt,
    updated_at: updatedAt
  })
)

/** Unprocessed updates plus pending deliveries, both counted on an index. */
const backlogQuery = compile((inboxBotId: number, deliveriesBotId: number) =>
  db.selectNoFrom((eb) =>
    eb(
      eb.selectFrom("botrelay_inbox")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("bot_id", "=", inboxBotId)
        .where("processed", "=", unprocessed),
      "+",
      eb.selectFrom("botrelay_deliveries")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("bot_id", "=", deliveriesBotId)
        .where("status", "=", pending)
    ).$notNull().as("backlog")
  )
)

/** The oldest processed inbox rows received before a time, oldest first (rowid order is arrival order). */
const pruneUpdatesQuery = compile((before: string, limit: number) =>
  db.deleteFrom("botrelay_inbox").where(sql<number>`rowid`, "in", (eb) =>
    eb.selectFrom("botrelay_inbox")
      .select(sql<number>`rowid`.as("row"))
      .where("processed", "=", sql.lit(1))
      .where("received_at", "<", before)
      .limit(limit))
)

/** The oldest delivered deliveries last updated before a time. */
const pruneDeliveriesQuery = compile((before: string, limit: number) =>
  db.deleteFrom("botrelay_deliveries").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_deliveries")
      .select("id")
      .where("status", "=", sql.lit("delivered"))
      .where("updated_at", "<", before)
      .orderBy("id")
      .limit(limit))
)

const nextDeliveriesQuery = compile((botId: number, limit: number) =>
  db.selectFrom("botrelay_deliveries")
    .selectAll()
    .where("bot_id", "=", botId)
    .where("status", "=", pending)
    .orderBy("id")
    .limit(limit)
)

const deliveredQuery = compile((at: string, id: number) =>
  db.updateTable("botrelay_deliveries")
    .set({ status: sql.lit<"delivered">("delivered"), updated_at: at })
    .where("id", "=", id)
)

const retryLaterQuery = compile((nextAttemptAt: string, lastError: string, at: string, id: number) =>
  db.updateTable("botrelay_deliveries").set((eb) => ({
    status: pending,
    attempts: eb("attempts", "+", eb.lit(1)),
    next_attempt_at: nextAttemptAt,
    last_error: lastError,
    updated_at: at
  })).where("id", "=", id)
)

const deadQuery = compile((lastError: string, at: string, id: number) =>
  db.updateTable("botrelay_deliveries").set((eb) => ({
    status: sql.lit<"dead">("dead"),
    attempts: eb("attempts", "+", eb.lit(1)),
    last_error: lastError,
    updated_at: at
  })).where("id", "=", id)
)

const queueSendQuery = compile((
  botId: number,
  kind: RouteSend.SendKind,
  routeId: number,
  sourceBotId: number,
  updateId: number,
  fromChatId: number,
  messageId: number,
  chatId: number,
  replyToMessageId: number,
  hop: number,
  nextAttemptAt: string,
  createdAt: string,
  updatedAt: string
) =>
  db.insertInto("botrelay_route_sends").values({
    bot_id: botId,
    kind,
    route_id: routeId,
    source_bot_id: sourceBotId,
    update_id: updateId,
    from_chat_id: fromChatId,
    message_id: messageId,
    chat_id: chatId,
    reply_to_message_id: replyToMessageId,
    hop,
    status: pending,
    attempts: sql.lit(0),
    next_attempt_at: nextAttemptAt,
    last_error: sql.lit(""),
    created_at: createdAt,
    updated_at: updatedAt
  })
)

/** The oldest sent route sends last updated before a time. */
const pruneSendsQuery = compile((before: string, limit: number) =>
  db.deleteFrom("botrelay_route_sends").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_route_sends")
      .select("id")
      .where("status", "=", sql.lit("sent"))
      .where("updated_at", "<", before)
      .orderBy("updated_at")
      .orderBy("id")
      .limit(limit))
)

/** Route sends with the payload of their update, while the inbox keeps it. */
const sendsWithPayload = () =>
  db.selectFrom("botrelay_route_sends as s")
    .leftJoin("botrelay_inbox as i", (join) =>
      join.onRef("i.bot_id", "=", "s.source_bot_id").onRef("i.update_id", "=", "s.update_id"))
    .selectAll("s")
    .select("i.payload")

const nextSendsQuery = compile((botId: number, limit: number) =>
  sendsWithPayload()
    .where("s.bot_id", "=", botId)
    .where("s.status", "=", pending)
    .orderBy("s.id")
    .limit(limit)
)

const sentQuery = compile((at: string, id: number) =>
  db.updateTable("botrelay_route_sends").set((eb) => ({
    status: sql.lit<"sent">("sent"),
    attempts: eb("attempts", "+", eb.lit(1)),
    last_error: sql.lit(""),
    updated_at: at
  })).where("id", "=", id)
)

const sendLaterQuery = compile((nextAttemptAt: string, lastError: string, at: string, id: number) =>
  db.updateTable("botrelay_route_sends").set((eb) => ({
    status: pending,
    attempts: eb("attempts", "+", eb.lit(1)),
    next_attempt_at: nextAttemptAt,
    last_error: lastError,
    updated_at: at
  })).where("id", "=", id)
)

const sendDeadQuery = compile((lastError: string, at: string, id: number) =>
  db.updateTable("botrelay_route_sends").set((eb) => ({
    status: sql.lit<"dead">("dead"),
    attempts: eb("attempts", "+", eb.lit(1)),
    last_error: lastError,
    updated_at: at
  })).where("id", "=", id)
)

const insertMappingQuery = compile((
  routeId: number,
  sourceBotId: number,
  sourceChatId: number,
  sourceMessageId: number,
  targetBotId: number,
  targetChatId: number,
  targetMessageId: number,
  hop: number,
  reversible: number,
  createdAt: string
) =>
  db.insertInto("botrelay_route_mappings").values({
    route_id: routeId,
    source_bot_id: sourceBotId,
    source_chat_id: sourceChatId,
    source_message_id: sourceMessageId,
    target_bot_id: targetBotId,
    target_chat_id: targetChatId,
    target_message_id: targetMessageId,
    hop,
    reversible,
    created_at: createdAt
  })
)

const findReverseQuery = compile((botId: number, chatId: number, messageId: number, since: string) =>
  db.selectFrom("botrelay_route_mappings")
    .selectAll()
    .where("target_bot_id", "=", botId)
    .where("target_chat_id", "=", chatId)
    .where("target_message_id", "=", messageId)
    .where("reversible", "=", sql.lit(1))
    .where("created_at", ">=", since)
    .orderBy("id", "desc")
    .limit(sql.lit(1))
)

const findProducedQuery = compile((chatId: number, messageId: number) =>
  db.selectFrom("botrelay_route_mappings")
    .selectAll()
    .where("target_chat_id", "=", chatId)
    .where("target_message_id", "=", messageId)
    .orderBy("id", "desc")
    .limit(sql.lit(1))
)

/** The oldest mappings created before a time. */
const pruneMappingsQuery = compile((before: string, limit: number) =>
  db.deleteFrom("botrelay_route_mappings").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_route_mappings")
      .select("id")
      .where("created_at", "<", before)
      .orderBy("created_at")
      .orderBy("id")
      .limit(limit))
)

const insertBufferedQuery = compile((
  botId: number,
  updateId: number,
  type: string,
  payload: string,
  createdAt: string
) =>
  db.insertInto("botrelay_long_poll_buffer")
    .values({ bot_id: botId, update_id: updateId, type, payload, created_at: createdAt })
    .onConflict((oc) => oc.columns(["bot_id", "update_id"]).doNothing())
)

const confirmBufferedQuery = compile((botId: number, offset: number) =>
  db.deleteFrom("botrelay_long_poll_buffer").where("bot_id", "=", botId).where("update_id", "<", offset)
)

/** Forgets all but the newest `skip + 1` updates of a bot (nothing when it holds no more). */
const keepNewestBufferedQuery = compile((botId: number, newestBotId: number, skip: number) =>
  db.deleteFrom("botrelay_long_poll_buffer")
    .where("bot_id", "=", botId)
    .where("update_id", "<", (eb) =>
      eb.selectFrom("botrelay_long_poll_buffer")
        .select("update_id")
        .where("bot_id", "=", newestBotId)
        .orderBy("update_id", "desc")
        .limit(sql.lit(1))
        .offset(skip))
)

const bufferedBeforeQuery = compile((botId: number, before: string) =>
  db.deleteFrom("botrelay_long_poll_buffer").where("bot_id", "=", botId).where("created_at", "<", before)
)

/** A page of a bot's buffer whose types are (or, with `not in`, are not) in a JSON array. */
const readBufferedQuery = (operator: "in" | "not in") =>
  compile((botId: number, offset: number, types: string, limit: number) =>
    db.selectFrom("botrelay_long_poll_buffer")
      .select(["update_id", "payload"])
      .where("bot_id", "=", botId)
      .where("update_id", ">=", offset)
      .where("type", operator, sql<string>`(select value from json_each(${types}))`)
      .orderBy("update_id")
      .limit(limit)
  )

const countBufferedQuery = compile((botId: number) =>
  db.selectFrom("botrelay_long_poll_buffer")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("bot_id", "=", botId)
)

const bufferStateQuery = compile((botId: number) =>
  db.selectFrom("botrelay_long_poll_state")
    .select(["allowed_updates", "trimmed", "last_trimmed_at"])
    .where("bot_id", "=", botId)
)

const recordTrimQuery = compile((botId: number, trimmed: number, at: string) =>
  db.insertInto("botrelay_long_poll_state")
    .values({ bot_id: botId, allowed_updates: sql.lit("[]"), trimmed, last_trimmed_at: at })
    .onConflict((oc) =>
      oc.column("bot_id").doUpdateSet((eb) => ({
        trimmed: eb(eb.ref("botrelay_long_poll_state.trimmed"), "+", eb.ref("excluded.trimmed")),
        last_trimmed_at: eb.ref("excluded.last_trimmed_at")
      }))
    )
)

const setAllowedUpdatesQuery = compile((botId: number, allowed: string) =>
  db.insertInto("botrelay_long_poll_state")
    .values({ bot_id: botId, allowed_updates: allowed, trimmed: sql.lit(0), last_trimmed_at: sql.lit("") })
    .onConflict((oc) =>
      oc.column("bot_id").doUpdateSet((eb) => ({ allowed_updates: eb.ref("excluded.allowed_updates") }))
    )
)

/** A `StorageService` over an open, migrated database; every query runs synchronously on a cached statement. */
const makeService = (sqlite: SqliteDatabase, cipher: SecretKey.Cipher): Storage.StorageService => {
  const toBot = toBotWith(cipher)
  const statements = new Map<string, SqliteStatement>()
  const messagePage = sqlite.prepare(messagePageQuery.sql).raw(true)
  const messageByKey = sqlite.prepare(findMessageQuery.sql).raw(true)

  /** A prepared statement for `query`: `all` gives its rows, `run` how many rows it changed. */
  const prepare = <P extends ReadonlyArray<unknown>, R>(query: Query<P, R>) => {
    const stmt = sqlite.prepare(query.sql)
    return {
      all: (...parameters: P): Array<R> => stmt.all(...parameters) as Array<R>,
      run: (...parameters: P): number => Number(stmt.run(...parameters).changes)
    }
  }

  /** The statements the pipeline runs thousands of times a second, prepared up front. */
  const hot = {
    pruneUpdates: prepare(pruneUpdatesQuery),
    pruneDeliveries: prepare(pruneDeliveriesQuery),
    findBot: prepare(findBotQuery),
    findBotByToken: prepare(findBotByTokenQuery),
    ingressOffset: prepare(ingressOffsetQuery),
    insertUpdate: prepare(insertUpdateQuery),
    raiseOffset: prepare(raiseOffsetQuery),
    pendingUpdates: prepare(pendingUpdatesQuery),
    markProcessed: prepare(markProcessedQuery),
    saveMessage: prepare(saveMessageQuery),
    queueDelivery: prepare(queueDeliveryQuery),
    backlog: prepare(backlogQuery),
    nextDeliveries: prepare(nextDeliveriesQuery),
    delivered: prepare(deliveredQuery),
    retryLater: prepare(retryLaterQuery),
    dead: prepare(deadQuery),
    queueSend: prepare(queueSendQuery),
    pruneSends: prepare(pruneSendsQuery),
    nextSends: prepare(nextSendsQuery),
    sent: prepare(sentQuery),
    sendLater: prepare(sendLaterQuery),
    sendDead: prepare(sendDeadQuery),
    insertMapping: prepare(insertMappingQuery),
    findReverse: prepare(findReverseQuery),
    findProduced: prepare(findProducedQuery),
    pruneMappings: prepare(pruneMappingsQuery),
    insertBuffered: prepare(insertBufferedQuery),
    confirmBuffered: prepare(confirmBufferedQuery),
    keepNewestBuffered: prepare(keepNewestBufferedQuery),
    bufferedBefore: prepare(bufferedBeforeQuery),
    readBufferedOnly: prepare(readBufferedQuery("in")),
    readBufferedExcept: prepare(readBufferedQuery("not in")),
    countBuffered: prepare(countBufferedQuery),
    bufferState: prepare(bufferStateQuery),
    recordTrim: prepare(recordTrimQuery),
    setAllowedUpdates: prepare(setAllowedUpdatesQuery)
  }

  const statement = (sql: string): SqliteStatement => {
    let stmt = statements.get(sql)
    if (stmt === undefined) {
      stmt = sqlite.prepare(sql)
      statements.set(sql, stmt)
    }
    return stmt
  }

  const all = <R>(query: Compilable<R>): Array<R> => {
    const compiled = query.compile()
    const stmt = statement(compiled.sql)
    if (stmt.reader) return stmt.all(...compiled.parameters) as Array<R>
    stmt.run(...compiled.parameters)
    return []
  }

  const run = (query: Compilable): number => {
    const compiled = query.compile()
    const stmt = statement(compiled.sql)
    return stmt.reader ? stmt.all(...compiled.parameters).length : Number(stmt.run(...compiled.parameters).changes)
  }

  const attempt = <A>(operation: string, f: () => A): Effect.Effect<A, Errors.StorageError> =>
    Effect.try({ try: f, catch: (cause) => new Errors.StorageError({ operation, cause }) })

  const first = <A, B>(rows: ReadonlyArray<A>, f: (row: A) => B): Option.Option<B> =>
    rows.length === 0 ? Option.none() : Option.some(f(rows[0]!))

  const guardToken = <A>(
    operation: string,
    tokenHash: string | undefined,
    f: () => A
  ): Effect.Effect<A, BotModule.DuplicateToken | Errors.StorageError> =>
    tokenHash === undefined ? attempt(operation, f) : attempt(operation, f).pipe(
      Effect.catchIf(
        (e) => isTokenConflict(e.cause),
        (e) =>
          Effect.flatMap(
            attempt(operation, () =>
              first(
                all(db.selectFrom("botrelay_bots").select("id").where("token_hash", "=", tokenHash)),
                (r) => r.id
              )),
            (existing): Effect.Effect<never, BotModule.DuplicateToken | Errors.StorageError> =>
              Option.isSome(existing)
                ? Effect.fail(new BotModule.DuplicateToken({ existing_bot_id: existing.value }))
                : Effect.fail(e)
          )
      )
    )

  const findBotRow = (id: number) => hot.findBot.all(id)

  const botIdsOf = (apiKeyId: number): Array<number> =>
    all(
      db.selectFrom("botrelay_api_key_bots").select("bot_id").where("api_key_id", "=", apiKeyId).orderBy("bot_id")
    ).map((r) => r.bot_id)

  const withBotIds = (row: ApiKeyRow): ApiKey.ApiKey => toApiKey(row, botIdsOf(row.id))

  const transaction = <A extends Array<any>, R>(f: (...args: A) => R): (...args: A) => R => sqlite.transaction(f)

  /**
   * The pipeline's writes of one event-loop turn, committed in one transaction (group commit): each
   * runs in its own savepoint (a lone write needs none), so one failing write fails alone, and each
   * caller resumes after the commit. Under load many bots write per turn, which saves most of the per-commit cost.
   */
  const groupCommit = (() => {
    type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }
    let queued: Array<{ readonly write: () => unknown; readonly done: (outcome: Outcome) => void }> = []
    const flush = () => {
      const batch = queued
      queued = []
      let outcomes: Array<Outcome>
      try {
        outcomes = batch.length === 1
          ? [{ ok: true, value: sqlite.transaction(batch[0]!.write)() }]
          : sqlite.transaction(() =>
            batch.map(({ write }): Outcome => {
              try {
                return { ok: true, value: sqlite.transaction(write)() }
              } catch (error) {
                return { ok: false, error }
              }
            })
          )()
      } catch (error) {
        outcomes = batch.map(() => ({ ok: false, error }))
      }
      batch.forEach(({ done }, i) => done(outcomes[i]!))
    }
    return <A>(operation: string, write: () => A): Effect.Effect<A, Errors.StorageError> =>
      Effect.async((resume) => {
        if (queued.length === 0) setImmediate(flush)
        queued.push({
          write,
          done: (outcome) =>
            resume(
              outcome.ok
                ? Effect.succeed(outcome.value as A)
                : Effect.fail(new Errors.StorageError({ operation, cause: outcome.error }))
            )
        })
      })
  })()

  const deleteBot = transaction((id: number): boolean => {
    run(db.deleteFrom("botrelay_deliveries").where("bot_id", "=", id))
    run(db.deleteFrom("botrelay_route_sends").where("bot_id", "=", id))
    run(
      db.deleteFrom("botrelay_route_mappings")
        .where((eb) => eb.or([eb("source_bot_id", "=", id), eb("target_bot_id", "=", id)]))
    )
    run(db.deleteFrom("botrelay_inbox").where("bot_id", "=", id))
    run(db.deleteFrom("botrelay_ingress").where("bot_id", "=", id))
    run(db.deleteFrom("botrelay_webhooks").where("bot_id", "=", id))
    run(db.deleteFrom("botrelay_long_poll_buffer").where("bot_id", "=", id))
    run(db.deleteFrom("botrelay_long_poll_state").where("bot_id", "=", id))
    run(db.deleteFrom("botrelay_messages").where("bot_id", "=", id))
    run(db.deleteFrom("botrelay_tags").where("bot_id", "=", id))
    run(db.deleteFrom("botrelay_routes").where("source_bot_id", "=", id))
    run(db.deleteFrom("botrelay_routes").where("target_bot_id", "=", id))
    run(db.deleteFrom("botrelay_api_key_bots").where("bot_id", "=", id))
    return run(db.deleteFrom("botrelay_bots").where("id", "=", id)) > 0
  })

  const insertApiKey = transaction((input: ApiKey.ApiKeyRecordInput): ApiKey.ApiKey => {
    const row = all(
      db.insertInto("botrelay_api_keys").values({
        name: input.name,
        role: input.role,
        prefix: input.prefix,
        hash: input.hash,
        created_at: input.created_at,
        last_used_at: "",
        enabled: 1
      }).returningAll()
    )[0]!
    const botIds = Array.from(new Set(input.bot_ids)).sort((a, b) => a - b)
    for (const botId of botIds) {
      run(db.insertInto("botrelay_api_key_bots").values({ api_key_id: row.id, bot_id: botId }))
    }
    return toApiKey(row, botIds)
  })

  const upsertTag = transaction((input: Tag.TagRecordInput): Tag.Tag => {
    const updated = all(
      db.updateTable("botrelay_tags")
        .set({ username: input.username, color: input.color })
        .where("bot_id", "=", input.bot_id)
        .where("chat_id", "=", input.chat_id)
        .where("user_id", "=", input.user_id)
        .where("tag", "=", input.tag)
        .returningAll()
    )
    if (updated.length > 0) return toTag(updated[0]!)
    return toTag(
      all(
        db.insertInto("botrelay_tags").values({
          bot_id: input.bot_id,
          chat_id: input.chat_id,
          user_id: input.user_id,
          username: input.username,
          tag: input.tag,
          color: input.color,
          created_at: input.created_at
        }).returningAll()
      )[0]!
    )
  })

  const saveMessage = (m: Message.Message): void => {
    hot.saveMessage.run(
      m.bot_id,
      m.chat_id,
      m.id,
      m.user_id,
      m.username,
      m.first_name,
      m.last_name,
      m.text,
      m.date,
      m.media_type ?? null,
      m.file_id ?? null,
      m.reply_to_message_id ?? null,
      m.direction,
      m.edit_date,
      bit(m.deleted)
    )
  }

  /** Saves the messages, all at once, or one by one when that fails; what the first unsaved one failed with. */
  const saveEach = (messages: ReadonlyArray<Message.Message>): unknown => {
    try {
      sqlite.transaction(() => messages.forEach(saveMessage))()
      return undefined
    } catch {
      let failure: unknown = undefined
      for (const m of messages) {
        try {
          sqlite.transaction(() => saveMessage(m))()
        } catch (error) {
          failure ??= error
        }
      }
      return failure
    }
  }

  const updateBot = transaction((id: number, set: Updateable<BotsTable>): Array<BotRow> => {
    if (Object.keys(set).length === 0) return findBotRow(id)
    const tokenHash = set.token_hash
    const before = tokenHash === undefined
      ? undefined
      : all(db.selectFrom("botrelay_bots").select("token_hash").where("id", "=", id))[0]?.token_hash
    const rows = all(db.updateTable("botrelay_bots").set(set).where("id", "=", id).returningAll())
    if (rows.length > 0 && tokenHash !== undefined && tokenHash !== before) {
      run(db.deleteFrom("botrelay_ingress").where("bot_id", "=", id))
    }
    return rows
  })

  const commitUpdates = transaction(
    (
      botId: number,
      updates: ReadonlyArray<Pick<Inbox.InboxUpdate, "update_id" | "payload" | "received_at">>,
      nextOffset: number
    ): number => {
      let added = 0
      for (const update of updates) {
        added += hot.insertUpdate.run(botId, update.update_id, update.payload, update.received_at)
      }
      hot.raiseOffset.run(botId, nextOffset)
      return added
    }
  )

  const recordAttempts = transaction((attempts: ReadonlyArray<readonly [number, Delivery.DeliveryOutcome]>) => {
    for (const [id, outcome] of attempts) {
      switch (outcome.status) {
        case "delivered":
          hot.delivered.run(outcome.at, id)
          break
        case "pending":
          hot.retryLater.run(outcome.next_attempt_at, outcome.last_error, outcome.at, id)
          break
        case "dead":
          hot.dead.run(outcome.last_error, outcome.at, id)
          break
      }
    }
  })

  const completeUpdates = transaction((completions: ReadonlyArray<Inbox.UpdateCompletion>): void => {
    for (const completion of completions) {
      if (hot.markProcessed.run(completion.bot_id, completion.update_id) === 0) continue
      for (const message of completion.messages) saveMessage(message)
      for (const d of completion.deliveries) {
        hot.queueDelivery.run(d.bot_id, d.update_id, d.url, d.payload, d.created_at, d.created_at, d.created_at)
      }
      for (const r of completion.sends ?? []) {
        hot.queueSend.run(
          r.bot_id,
          r.kind,
          r.route_id,
          r.source_bot_id,
          r.update_id,
          r.from_chat_id,
          r.message_id,
          r.chat_id,
          r.reply_to_message_id,
          r.hop,
          r.created_at,
          r.created_at,
          r.created_at
        )
      }
      const b = completion.buffer
      if (b !== undefined) {
        hot.insertBuffered.run(completion.bot_id, completion.update_id, b.type, b.payload, b.created_at)
      }
    }
  })

  const recordSend = transaction(
    (id: number, outcome: RouteSend.SendOutcome, mappings: ReadonlyArray<RouteSend.NewRouteMapping>): void => {
      let changed: number
      switch (outcome.status) {
        case "sent":
          changed = hot.sent.run(outcome.at, id)
          break
        case "pending":
          changed = hot.sendLater.run(outcome.next_attempt_at, outcome.last_error, outcome.at, id)
          break
        case "dead":
          changed = hot.sendDead.run(outcome.last_error, outcome.at, id)
          break
      }
      if (changed === 0) return
      for (const m of mappings) {
        hot.insertMapping.run(
          m.route_id,
          m.source_bot_id,
          m.source_chat_id,
          m.source_message_id,
          m.target_bot_id,
          m.target_chat_id,
          m.target_message_id,
          m.hop,
          bit(m.reversible),
          m.created_at
        )
      }
    }
  )

  const trimBuffered = transaction((botId: number, retention: LongPoll.BufferRetention): number => {
    const dropped = hot.keepNewestBuffered.run(botId, botId, Math.max(0, retention.max_updates - 1)) +
      hot.bufferedBefore.run(botId, retention.before)
    if (dropped > 0) hot.recordTrim.run(botId, dropped, retention.at)
    return dropped
  })

  const deleteApiKey = transaction((id: number): boolean => {
    run(db.deleteFrom("botrelay_api_key_bots").where("api_key_id", "=", id))
    return run(db.deleteFrom("botrelay_api_keys").where("id", "=", id)) > 0
  })

  return {
    insertBot: (input) => {
      const token = Redacted.value(input.token)
      const tokenHash = cipher.tokenHash(token)
      return guardToken("insertBot", tokenHash, () => {
        const rows = all(
          db.insertInto("botrelay_bots").values({
            token: cipher.encrypt("token", token),
            token_hash: tokenHash,
            name: input.name,
            source: input.source,
            manage_enabled: bit(input.manage_enabled),
            proxy_enabled: bit(input.proxy_enabled),
            backend_url: input.backend_url,
            backend_url_origin: input.backend_url_origin ?? "api",
            secret_token: cipher.encrypt("secret_token", Redacted.value(input.secret_token)),
            long_poll_enabled: bit(input.long_poll_enabled),
            description: input.description,
            webhook_mode: 0,
            disabled: 0,
            username: "",
            last_error: "",
            last_update_at: "",
            created_at: input.created_at,
            updated_at: input.created_at
          }).returningAll()
        )
        return toBot(rows[0]!)
      })
    },

    updateBot: (id, patch) => {
      const set: { -readonly [K in keyof Updateable<BotsTable>]: Updateable<BotsTable>[K] } = {}
      for (const key of botTextFields) {
        const value = patch[key]
        if (value !== undefined) Object.assign(set, { [key]: value })
      }
      for (const key of botFlagFields) {
        const value = patch[key]
        if (value !== undefined) set[key] = bit(value)
      }
      if (patch.secret_token !== undefined) {
        set.secret_token = cipher.encrypt("secret_token", Redacted.value(patch.secret_token))
      }
      if (patch.token !== undefined) {
        set.token = cipher.encrypt("token", Redacted.value(patch.token))
        set.token_hash = cipher.tokenHash(Redacted.value(patch.token))
      }
      return guardToken("updateBot", set.token_hash, () => first(updateBot(id, set), toBot))
    },

    findBot: (id) => attempt("findBot", () => first(findBotRow(id), toBot)),

    findBotByToken: (token) =>
      attempt("findBotByToken", () => first(hot.findBotByToken.all(cipher.tokenHash(token)), toBot)),

    listBots: attempt("listBots", () => all(db.selectFrom("botrelay_bots").selectAll().orderBy("id")).map(toBot)),

    deleteBot: (id) => attempt("deleteBot", () => deleteBot(id)),

    insertRoute: (input) =>
      attempt("insertRoute", () =>
        toRoute(
          all(
            db.insertInto("botrelay_routes").values({
              source_bot_id: input.source_bot_id,
              target_bot_id: input.target_bot_id,
              condition_type: input.condition_type,
              condition_value: input.condition_value,
              action: input.action,
              target_chat_id: input.target_chat_id,
              enabled: bit(input.enabled),
              description: input.description,
              created_at: input.created_at
            }).returningAll()
          )[0]!
        )),

    replaceRoute: (id, input) =>
      attempt("replaceRoute", () =>
        first(
          all(
            db.updateTable("botrelay_routes").set({
              source_bot_id: input.source_bot_id,
              target_bot_id: input.target_bot_id,
              condition_type: input.condition_type,
              condition_value: input.condition_value,
              action: input.action,
              target_chat_id: input.target_chat_id,
              enabled: bit(input.enabled),
              description: input.description
            }).where("id", "=", id).returningAll()
          ),
          toRoute
        )),

    findRoute: (id) =>
      attempt(
        "findRoute",
        () => first(all(db.selectFrom("botrelay_routes").selectAll().where("id", "=", id)), toRoute)
      ),

    listRoutes: (filter) =>
      attempt("listRoutes", () => {
        const botId = filter.bot_id
        const query = db.selectFrom("botrelay_routes").selectAll().orderBy("id")
        return all(
          botId === undefined
            ? query
            : query.where((eb) => eb.or([eb("source_bot_id", "=", botId), eb("target_bot_id", "=", botId)]))
        ).map(toRoute)
      }),

    deleteRoute: (id) => attempt("deleteRoute", () => run(db.deleteFrom("botrelay_routes").where("id", "=", id)) > 0),

    saveMessage: (m) => groupCommit("saveMessage", () => saveMessage(m)),
    saveMessages: (messages) =>
      groupCommit("saveMessages", () => saveEach(messages)).pipe(
        Effect.flatMap((failure) =>
          failure === undefined
            ? Effect.void
            : Effect.fail(new Errors.StorageError({ operation: "saveMessages", cause: failure }))
        )
      ),

    listMessages: (query) =>
      attempt("listMessages", () =>
        (messagePage.all(query.bot_id, query.chat_id, query.limit, query.offset) as Array<ReadonlyArray<unknown>>)
          .map((row) => toMessage(query.bot_id, query.chat_id, row))),

    findMessage: (botId, chatId, id) =>
      attempt("findMessage", () =>
        first(
          messageByKey.all(botId, chatId, id) as Array<ReadonlyArray<unknown>>,
          (row) => toMessage(botId, chatId, row)
        )),

    markMessagesDeleted: (botId, chatId, ids) =>
      attempt("markMessagesDeleted", () =>
        ids.length === 0 ? 0 : run(
          db.updateTable("botrelay_messages").set({ deleted: 1 })
            .where("bot_id", "=", botId)
            .where("chat_id", "=", chatId)
            .where("id", "in", [...new Set(ids)])
        )),

    upsertTag: (input) => attempt("upsertTag", () => upsertTag(input)),

    listTags: (filter) =>
      attempt("listTags", () => {
        const userId = filter.user_id
        let query = db.selectFrom("botrelay_tags").selectAll().where("chat_id", "=", filter.chat_id).orderBy("id")
        if (filter.bot_id !== undefined) query = query.where("bot_id", "=", filter.bot_id)
        return all(userId === undefined ? query : query.where("user_id", "=", userId)).map(toTag)
      }),

    findTag: (id) =>
      attempt("findTag", () => first(all(db.selectFrom("botrelay_tags").selectAll().where("id", "=", id)), toTag)),

    deleteTag: (id) => attempt("deleteTag", () => run(db.deleteFrom("botrelay_tags").where("id", "=", id)) > 0),

    insertApiKey: (input) => attempt("insertApiKey", () => insertApiKey(input)),

    listApiKeys: attempt("listApiKeys", () => {
      const keys = all(db.selectFrom("botrelay_api_keys").selectAll().orderBy("id"))
      const links = all(
        db.selectFrom("botrelay_api_key_bots").selectAll().orderBy("api_key_id").orderBy("bot_id")
      )
      const botIds = new Map<number, Array<number>>()
      for (const link of links) {
        const ids = botIds.get(link.api_key_id)
        if (ids === undefined) botIds.set(link.api_key_id, [link.bot_id])
        else ids.push(link.bot_id)
      }
      return keys.map((key) => toApiKey(key, botIds.get(key.id) ?? []))
    }),

    findApiKey: (id) =>
      attempt(
        "findApiKey",
        () => first(all(db.selectFrom("botrelay_api_keys").selectAll().where("id", "=", id)), withBotIds)
      ),

    findApiKeyByHash: (hash) =>
      attempt(
        "findApiKeyByHash",
        () => first(all(db.selectFrom("botrelay_api_keys").selectAll().where("hash", "=", hash)), withBotIds)
      ),

    setApiKeyEnabled: (id, enabled) =>
      attempt("setApiKeyEnabled", () =>
        first(
          all(db.updateTable("botrelay_api_keys").set({ enabled: bit(enabled) }).where("id", "=", id).returningAll()),
          withBotIds
        )),

    touchApiKey: (id, at) =>
      attempt("touchApiKey", () => {
        run(db.updateTable("botrelay_api_keys").set({ last_used_at: at }).where("id", "=", id))
      }),

    deleteApiKey: (id) => attempt("deleteApiKey", () => deleteApiKey(id)),

    ingressOffset: (botId) =>
      attempt("ingressOffset", () => hot.ingressOffset.all(botId)[0]?.offset ?? 0),

    commitUpdates: (botId, updates, nextOffset) =>
      groupCommit("commitUpdates", () => commitUpdates(botId, updates, nextOffset)),

    webhookSecret: (botId) =>
      attempt("webhookSecret", () =>
        Option.map(
          Option.fromNullable(
            all(db.selectFrom("botrelay_webhooks").select("secret").where("bot_id", "=", botId))[0]?.secret
          ),
          (secret) => cipher.decrypt("webhook_secret", secret)
        )),

    setWebhookSecret: (botId, secret) =>
      attempt("setWebhookSecret", () => {
        const stored = secret === undefined ? undefined : cipher.encrypt("webhook_secret", secret)
        run(
          secret === undefined
            ? db.deleteFrom("botrelay_webhooks").where("bot_id", "=", botId)
            : db.insertInto("botrelay_webhooks").values({ bot_id: botId, secret: stored! }).onConflict((oc) =>
              oc.column("bot_id").doUpdateSet({ secret: stored! })
            )
        )
      }),

    pendingUpdates: (botId, limit) =>
      attempt("pendingUpdates", () => hot.pendingUpdates.all(botId, limit).map(toInboxUpdate)),

    completeUpdates: (completions) => groupCommit("completeUpdates", () => completeUpdates(completions)),

    backlog: (botId) => attempt("backlog", () => hot.backlog.all(botId, botId)[0]!.backlog),

    pruneFinished: (before, limit) =>
      groupCommit("pruneFinished", () => ({
        updates: hot.pruneUpdates.run(before, limit),
        deliveries: hot.pruneDeliveries.run(before, limit),
        sends: hot.pruneSends.run(before, limit)
      })),

    botsWithWork: attempt("botsWithWork", () =>
      all(
        db.selectFrom("botrelay_inbox").select("bot_id").where("processed", "=", unprocessed)
          .union(db.selectFrom("botrelay_deliveries").select("bot_id").where("status", "=", "pending"))
          .union(db.selectFrom("botrelay_route_sends").select("bot_id").where("status", "=", "pending"))
          .orderBy("bot_id")
      ).map((r) => r.bot_id)),

    nextDeliveries: (botId, limit) =>
      attempt("nextDeliveries", () => hot.nextDeliveries.all(botId, limit).map(toDelivery)),

    recordAttempts: (attempts) => groupCommit("recordAttempts", () => recordAttempts(attempts)),

    listDeliveries: (filter) =>
      attempt("listDeliveries", () => {
        let query = db.selectFrom("botrelay_deliveries").selectAll().orderBy("id", "desc").limit(filter.limit)
        if (filter.bot_id !== undefined) query = query.where("bot_id", "=", filter.bot_id)
        if (filter.status !== undefined) query = query.where("status", "=", filter.status)
        return all(query).map(toDelivery)
      }),

    retryDelivery: (id, at) =>
      attempt("retryDelivery", () =>
        first(
          all(
            db.updateTable("botrelay_deliveries")
              .set({ status: "pending", attempts: 0, next_attempt_at: at, updated_at: at })
              .where("id", "=", id)
              .where("status", "=", "dead")
              .returningAll()
          ),
          toDelivery
        )),

    retargetDeliveries: (botId, url, at) =>
      attempt("retargetDeliveries", () =>
        run(
          db.updateTable("botrelay_deliveries")
            .set({ url, attempts: 0, next_attempt_at: at, updated_at: at })
            .where("bot_id", "=", botId)
            .where("status", "=", pending)
        )),

    nextSends: (botId, limit) => attempt("nextSends", () => hot.nextSends.all(botId, limit).map(toRouteSend)),

    recordSend: (id, outcome, mappings) => groupCommit("recordSend", () => recordSend(id, outcome, mappings)),

    listSends: (filter) =>
      attempt("listSends", () => {
        let query = sendsWithPayload().orderBy("s.id", "desc").limit(filter.limit)
        if (filter.bot_id !== undefined) query = query.where("s.bot_id", "=", filter.bot_id)
        if (filter.status !== undefined) query = query.where("s.status", "=", filter.status)
        return all(query).map(toRouteSend)
      }),

    findReverse: (targetBotId, targetChatId, targetMessageId, since) =>
      attempt("findReverse", () =>
        first(hot.findReverse.all(targetBotId, targetChatId, targetMessageId, since), toRouteMapping)),

    findProduced: (chatId, messageId) =>
      attempt("findProduced", () => first(hot.findProduced.all(chatId, messageId), toRouteMapping)),

    pruneMappings: (before, limit) => groupCommit("pruneMappings", () => hot.pruneMappings.run(before, limit)),

    confirmBuffered: (botId, offset) =>
      groupCommit("confirmBuffered", () => hot.confirmBuffered.run(botId, offset)),

    keepNewestBuffered: (botId, count) =>
      groupCommit("keepNewestBuffered", () =>
        count < 1
          ? hot.confirmBuffered.run(botId, Number.MAX_SAFE_INTEGER)
          : hot.keepNewestBuffered.run(botId, botId, count - 1)),

    readBuffered: (botId, query) =>
      attempt("readBuffered", () =>
        "only" in query.types
          ? hot.readBufferedOnly.all(botId, query.offset, JSON.stringify(query.types.only), query.limit)
          : hot.readBufferedExcept.all(botId, query.offset, JSON.stringify(query.types.except), query.limit)),

    countBuffered: (botId) => attempt("countBuffered", () => hot.countBuffered.all(botId)[0]!.count),

    dropBuffered: (botId) =>
      groupCommit("dropBuffered", () => hot.confirmBuffered.run(botId, Number.MAX_SAFE_INTEGER)),

    trimBuffered: (botId, retention) => groupCommit("trimBuffered", () => trimBuffered(botId, retention)),

    bufferState: (botId) =>
      attempt("bufferState", () => {
        const row = hot.bufferState.all(botId)[0]
        if (row === undefined) return { allowed_updates: [], trimmed: 0, last_trimmed_at: "" }
        const allowed = JSON.parse(row.allowed_updates) as Array<string>
        return { allowed_updates: allowed, trimmed: row.trimmed, last_trimmed_at: row.last_trimmed_at }
      }),

    setAllowedUpdates: (botId, types) =>
      attempt("setAllowedUpdates", () => {
        hot.setAllowedUpdates.run(botId, JSON.stringify(types))
      }),

    readSettings: (names) =>
      attempt("readSettings", () =>
        names.length === 0
          ? {}
          : Object.fromEntries(
            all(db.selectFrom("botrelay_settings").select(["name", "value"]).where("name", "in", [...names]))
              .map((r) => [r.name, Storage.secretSettings.has(r.name) ? cipher.decrypt("setting", r.value) : r.value])
          )),

    writeSettings: (values) =>
      attempt("writeSettings", () =>
        transaction(() => {
          for (const [name, value] of Object.entries(values)) {
            if (value === undefined) run(db.deleteFrom("botrelay_settings").where("name", "=", name))
            else {
              const stored = Storage.secretSettings.has(name) ? cipher.encrypt("setting", value) : value
              run(
                db.insertInto("botrelay_settings").values({ name, value: stored })
                  .onConflict((oc) => oc.column("name").doUpdateSet({ value: stored }))
              )
            }
          }
        })()),

    ping: attempt("ping", () => {
      statement("SELECT 1").all()
    })
  }
}

/**
 * Opens (or adopts) the database, brings the `botrelay_*` tables up to date and returns the storage.
 * A database opened from a filename is closed when the scope closes; an adopted one is left open.
 */
export const make = (
  options: Options
): Effect.Effect<Storage.StorageService, MigrationError | SecretKeyError | Errors.StorageError, Scope.Scope> =>
  Effect.map(openWithKey(options), ({ cipher, sqlite }) => makeService(sqlite, cipher))

/** Opens the database with its key: checks the key, brings the schema up to date, checks the key again. */
const openWithKey = (options: Options) =>
  Effect.gen(function*() {
    const sqlite = yield* open(options)
    const { key, source } = yield* resolveKey(options)
    const cipher = SecretKey.cipher(key)
    const file = "filename" in options ? options.filename : options.database.name
    yield* verifyKey(sqlite, cipher, source, file)
    yield* migrate(sqlite, cipher)
    yield* verifyKey(sqlite, cipher, source, file)
    return { cipher, sqlite }
  })

/** `Storage` on SQLite: a file the layer opens and closes, or a database the host owns. */
export const layer = (
  options: Options
): Layer.Layer<Storage.Storage, MigrationError | SecretKeyError | Errors.StorageError> =>
  Layer.scoped(Storage.Storage, make(options))

/** What a key rotation re-encrypted. */
export interface Rotated {
  readonly bots: number
  readonly webhook_secrets: number
  readonly settings: number
}

/**
 * Re-encrypts every secret of the database with `to`, in one transaction, after checking that `from`
 * (with `options.secretKey`, or the key file) is its key; a database still in plaintext is first
 * encrypted with `from`. Nothing else may use the database meanwhile (stop the server first).
 */
export const rotateSecretKey = (
  options: Options,
  to: SecretKey.SecretKey
): Effect.Effect<Rotated, MigrationError | SecretKeyError | Errors.StorageError, Scope.Scope> =>
  Effect.flatMap(openWithKey(options), ({ cipher: from, sqlite }) =>
    overwriting(sqlite, Effect.try({
      try: () => {
        const next = SecretKey.cipher(to)
        return sqlite.transaction((): Rotated => {
          const bots = sqlite.prepare("SELECT id, token, secret_token FROM botrelay_bots").all() as Array<
            { id: number; token: string; secret_token: string }
          >
          const updateBot = sqlite.prepare(
            "UPDATE botrelay_bots SET token = ?, token_hash = ?, secret_token = ? WHERE id = ?"
          )
          for (const bot of bots) {
            const token = from.decrypt("token", bot.token)
            updateBot.run(
              next.encrypt("token", token),
              next.tokenHash(token),
              next.encrypt("secret_token", from.decrypt("secret_token", bot.secret_token)),
              bot.id
            )
          }
          const hooks = sqlite.prepare("SELECT bot_id, secret FROM botrelay_webhooks").all() as Array<
            { bot_id: number; secret: string }
          >
          const updateHook = sqlite.prepare("UPDATE botrelay_webhooks SET secret = ? WHERE bot_id = ?")
          for (const hook of hooks) {
            updateHook.run(next.encrypt("webhook_secret", from.decrypt("webhook_secret", hook.secret)), hook.bot_id)
          }
          const names = [...Storage.secretSettings]
          const settings = (sqlite.prepare("SELECT name, value FROM botrelay_settings").all() as Array<
            { name: string; value: string }
          >).filter((setting) => names.includes(setting.name))
          const updateSetting = sqlite.prepare("UPDATE botrelay_settings SET value = ? WHERE name = ?")
          for (const setting of settings) {
            updateSetting.run(next.encrypt("setting", from.decrypt("setting", setting.value)), setting.name)
          }
          sqlite.prepare("UPDATE botrelay_secret_key SET check_value = ? WHERE id = 1")
            .run(next.encrypt("check", SecretKey.checkPlaintext))
          return { bots: bots.length, webhook_secrets: hooks.length, settings: settings.length }
        })()
      },
      catch: (cause) =>
        cause instanceof SecretKey.SecretKeyError ? cause : new Errors.StorageError({ operation: "rotateSecretKey", cause })
    }))
  )
