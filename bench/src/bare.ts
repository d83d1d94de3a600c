/**
 * The ceiling: plain node:http and better-sqlite3 on the same database, serving `GET /api/bots` and
 * `GET /api/messages` with the same auth work (key pattern, SHA-256 of the bearer key, a cache of
 * keys by hash filled from storage), the same queries and the same JSON as the real API.
 *
 * Env: BARE_DATABASE (file), BARE_PORT, BARE_HOST (default 127.0.0.1).
 */
import { createHash } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import { SecretKey } from "@botrelay/sqlite"
import BetterSqlite3 from "better-sqlite3"

interface KeyRow {
  readonly id: number
  readonly role: "admin" | "operator"
  readonly enabled: number
}

interface Key {
  readonly id: number
  readonly role: "admin" | "operator"
  readonly enabled: boolean
  readonly bot_ids: ReadonlyArray<number>
}

interface BotRow {
  readonly id: number
  readonly token: string
  readonly name: string
  readonly source: string
  readonly manage_enabled: number
  readonly proxy_enabled: number
  readonly backend_url: string
  readonly backend_url_origin: string
  readonly secret_token: string
  readonly long_poll_enabled: number
  readonly description: string
  readonly webhook_mode: number
  readonly disabled: number
  readonly username: string
  readonly last_error: string
  readonly last_update_at: string
  readonly created_at: string
  readonly updated_at: string
}

interface MessageRow {
  readonly bot_id: number
  readonly chat_id: number
  readonly id: number
  readonly user_id: number
  readonly username: string
  readonly first_name: string
  readonly last_name: string
  readonly text: string
  readonly date: number
  readonly media_type: string | null
  readonly file_id: string | null
  readonly reply_to_message_id: number | null
  readonly direction: string
  readonly edit_date: number
  readonly deleted: number
}

const filename = process.env["BARE_DATABASE"]
const port = Number(process.env["BARE_PORT"])
const host = process.env["BARE_HOST"] ?? "127.0.0.1"
if (filename === undefined || !Number.isInteger(port)) {
  process.stderr.write("bare: set BARE_DATABASE and BARE_PORT\n")
  process.exit(2)
}

const db = new BetterSqlite3(filename, { fileMustExist: true })
const cipher = SecretKey.cipher(SecretKey.readFile(SecretKey.keyFileFor(filename)))
db.pragma("busy_timeout = 5000")

const selectOne = db.prepare("SELECT 1")
const keyByHash = db.prepare<[string], KeyRow>("SELECT id, role, enabled FROM botrelay_api_keys WHERE hash = ?")
const keyBots = db.prepare<[number], { bot_id: number }>(
  "SELECT bot_id FROM botrelay_api_key_bots WHERE api_key_id = ? ORDER BY bot_id"
)
const touchKey = db.prepare<[string, number]>("UPDATE botrelay_api_keys SET last_used_at = ? WHERE id = ?")
const listBots = db.prepare<[], BotRow>("SELECT * FROM botrelay_bots ORDER BY id")
const findBot = db.prepare<[number], BotRow>("SELECT * FROM botrelay_bots WHERE id = ?")
const listMessages = db.prepare<[number, number, number, number], MessageRow>(
  "SELECT * FROM botrelay_messages WHERE bot_id = ? AND chat_id = ? ORDER BY date DESC, id DESC LIMIT ? OFFSET ?"
)

const keyPattern = /^brk_[A-Za-z0-9_-]{43}$/
const byHash = new Map<string, Key>()
const lastTouched = new Map<number, number>()

const authenticate = (authorization: string | undefined): Key | undefined => {
  const secret = (authorization ?? "").slice(7)
  if (!keyPattern.test(secret)) return undefined
  const hash = createHash("sha256").update(secret).digest("hex")
  let key = byHash.get(hash)
  if (key === undefined) {
    const row = keyByHash.get(hash)
    if (row === undefined) return undefined
    key = { id: row.id, role: row.role, enabled: row.enabled === 1, bot_ids: keyBots.all(row.id).map((r) => r.bot_id) }
    byHash.set(hash, key)
  }
  if (!key.enabled) return undefined
  const now = Date.now()
  if (now - (lastTouched.get(key.id) ?? 0) >= 60_000) {
    lastTouched.set(key.id, now)
    touchKey.run(new Date(now).toISOString(), key.id)
  }
  return key
}

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const json = JSON.stringify(body)
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json)
  })
  res.end(json)
}

/** `123456:…wxyz`, as the API masks tokens. */
const mask = (token: string) => {
  const colon = token.indexOf(":")
  const secret = token.slice(colon + 1)
  return `${token.slice(0, colon)}:…${secret.length >= 16 ? secret.slice(-4) : ""}`
}

/** The URL without `user:password@`, as operators see it. */
const withoutCredentials = (url: string) => {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  if (parsed.username === "" && parsed.password === "") return url
  parsed.username = ""
  parsed.password = ""
  return parsed.href
}

const toBot = (r: BotRow, role: Key["role"]) => ({
  id: r.id,
  token: mask(cipher.decrypt("token", r.token)),
  name: r.name,
  source: r.source,
  manage_enabled: r.manage_enabled === 1,
  proxy_enabled: r.proxy_enabled === 1,
  backend_url: role === "admin" ? r.backend_url : withoutCredentials(r.backend_url),
  backend_url_origin: r.backend_url_origin,
  secret_token: r.secret_token === "" ? "" : "***",
  long_poll_enabled: r.long_poll_enabled === 1,
  description: r.description,
  running: false,
  webhook_mode: r.webhook_mode === 1,
  disabled: r.disabled === 1,
  username: r.username,
  last_error: r.last_error,
  last_update_at: r.last_update_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  token_set: true,
  secret_token_set: r.secret_token !== ""
})

const toMessage = (r: MessageRow) => {
  const message: Record<string, unknown> = {
    id: r.id,
    chat_id: r.chat_id,
    bot_id: r.bot_id,
    user_id: r.user_id,
    username: r.username,
    first_name: r.first_name,
    last_name: r.last_name,
    text: r.text,
    date: r.date,
    direction: r.direction,
    edit_date: r.edit_date,
    deleted: r.deleted === 1
  }
  if (r.media_type !== null) message["media_type"] = r.media_type
  if (r.file_id !== null) message["file_id"] = r.file_id
  if (r.reply_to_message_id !== null) message["reply_to_message_id"] = r.reply_to_message_id
  return message
}

const intParam = (params: URLSearchParams, name: string, fallback: number | undefined, min: number, max: number) => {
  const raw = params.get(name)
  if (raw === null) return fallback
  const value = Number(raw)
  return raw.trim() !== "" && Number.isInteger(value) && value >= min && value <= max ? value : undefined
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost")
  const path = url.pathname
  if (req.method !== "GET") return send(res, 404, { error: "not found", code: "not_found" })
  if (path === "/api/health") {
    selectOne.get()
    return send(res, 200, { status: "ok", storage: "ok" })
  }
  if (path !== "/api/bots" && path !== "/api/messages") return send(res, 404, { error: "not found", code: "not_found" })

  const key = authenticate(req.headers.authorization)
  if (key === undefined) {
    return send(res, 401, { error: "missing or invalid API key", code: "unauthorized" }, {
      "www-authenticate": "Bearer"
    })
  }

  if (path === "/api/bots") {
    const rows = listBots.all()
    const visible = key.role === "admin" ? rows : rows.filter((r) => key.bot_ids.includes(r.id))
    return send(res, 200, visible.map((r) => toBot(r, key.role)))
  }

  const params = url.searchParams
  const botId = intParam(params, "bot_id", undefined, 1, Number.MAX_SAFE_INTEGER)
  const chatId = intParam(params, "chat_id", undefined, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
  const limit = intParam(params, "limit", 50, 1, 200)
  const offset = intParam(params, "offset", 0, 0, Number.MAX_SAFE_INTEGER)
  if (botId === undefined || chatId === undefined || limit === undefined || offset === undefined) {
    return send(res, 400, { error: "invalid request", code: "invalid_request" })
  }
  if (key.role !== "admin" && !key.bot_ids.includes(botId)) {
    return send(res, 403, { error: `this key may not act on bot ${botId}`, code: "forbidden" })
  }
  if (findBot.get(botId) === undefined) {
    return send(res, 404, { error: `bot ${botId} not found`, code: "bot_not_found" })
  }
  return send(res, 200, listMessages.all(botId, chatId, limit, offset).map(toMessage))
})

server.listen(port, host)

const shutdown = () => server.close(() => db.close())
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
