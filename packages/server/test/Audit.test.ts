import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AuditLog } from "@botrelay/core"
import { Duration, Effect } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Config from "../src/Config.js"
import * as Main from "../src/Main.js"
import { assertError, eventually, startServer, type TestServer } from "./Harness.js"

// GET /api/audit over entries recorded through the server's own AuditLog. Other entries (those the API
// records of its own calls) may be in the log too: assertions look at the `test.` actions this file records.

const botToken = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"

let server: TestServer
let operatorKey: string
/** The ids of the entries recorded, by name. */
const ids: Record<string, number> = {}

const record = (server: TestServer, entry: AuditLog.AuditRecord) =>
  server.run(Effect.flatMap(AuditLog.AuditLog, (log) => log.record(entry)))

const entry = (overrides: Partial<AuditLog.AuditRecord>): AuditLog.AuditRecord => ({
  actor_type: "account",
  actor_id: 901,
  actor_name: "olga",
  ip: "203.0.113.7",
  action: "test.bots.add",
  target_type: "bot",
  target_id: "11",
  bot_id: 11,
  chat_id: null,
  outcome: "ok",
  details: {},
  ...overrides
})

/** The entries recorded here, in the order recorded; each gets its own millisecond. */
const recorded: Record<string, AuditLog.AuditRecord> = {
  a: entry({ details: { name: "shop", token: botToken, note: `added ${botToken}` } }),
  b: entry({ actor_id: 902, actor_name: "ivan", action: "test.chats.ban", bot_id: 12, chat_id: -100123, outcome: "denied" }),
  c: entry({ actor_type: "system", actor_id: 0, actor_name: "", ip: "", action: "test.deliveries.retry", outcome: "failed" }),
  d: entry({ action: "test.chats.ban", target_type: "chat", target_id: "5", chat_id: 5 }),
  e: entry({ actor_type: "cli", actor_id: 0, actor_name: "cli", ip: "", action: "test.keys.create", bot_id: null })
}

const list = async (query: string, key?: string) => {
  const reply = await server.call(`/api/audit${query === "" ? "" : `?${query}`}`, key === undefined ? {} : { key })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as { items: Array<any>; next_cursor: string | null }
}

/** The names of this file's entries among the items, in the order given. */
const ours = (items: ReadonlyArray<any>) =>
  items.flatMap((item) => Object.entries(ids).filter(([, id]) => id === item.id).map(([name]) => name))

beforeAll(async () => {
  server = await startServer()
  operatorKey = (await server.call("/api/auth/api-keys", { body: { name: "op", role: "operator", bot_ids: [] } })).json.key
  for (const [name, input] of Object.entries(recorded)) {
    await record(server, input)
    const newest = (await list(`action=${input.action}&limit=1`)).items[0]
    ids[name] = newest.id
    await new Promise((resolve) => setTimeout(resolve, 3))
  }
})
afterAll(async () => {
  await server?.close()
})

describe("GET /api/audit", () => {
  it("lists entries newest first, every field, details without secrets", async () => {
    const page = await list("")
    assert.deepStrictEqual(ours(page.items), ["e", "d", "c", "b", "a"])
    const a = page.items.find((item) => item.id === ids.a)
    assert.match(a.at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    assert.deepStrictEqual(a, {
      id: ids.a,
      at: a.at,
      ...recorded.a,
      details: { name: "shop", note: "added [redacted]" }
    })
    assert.notInclude(JSON.stringify(page), botToken)
    assert.strictEqual(page.items.find((item) => item.id === ids.e).bot_id, null)
  })

  it("filters by actor type, actor id, action and bot, alone and together", async () => {
    const check = async (query: string, expected: Array<string>, holds: (item: any) => boolean) => {
      const { items } = await list(query)
      assert.deepStrictEqual(ours(items), expected, query)
      assert.isTrue(items.every(holds), query)
    }
    await check("actor_type=account", ["d", "b", "a"], (i) => i.actor_type === "account")
    await check("actor_type=cli", ["e"], (i) => i.actor_type === "cli")
    await check("actor_type=account&actor_id=901", ["d", "a"], (i) => i.actor_id === 901)
    await check("actor_id=902", ["b"], (i) => i.actor_id === 902)
    await check("action=test.chats.ban", ["d", "b"], (i) => i.action === "test.chats.ban")
    await check("bot_id=11", ["d", "c", "a"], (i) => i.bot_id === 11)
    await check("bot_id=11&action=test.chats.ban&actor_type=account&actor_id=901", ["d"], () => true)
    await check("action=test.nothing", [], () => false)
  })

  it("reads a time range: from inclusive, to exclusive, in any zone", async () => {
    const { items } = await list("")
    const at = (name: string) => items.find((item) => item.id === ids[name]).at as string
    const q = (from: string, to: string) => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`
    assert.deepStrictEqual(ours((await list(q(at("b"), at("d")))).items), ["c", "b"])
    const plusTwo = (iso: string) => new Date(Date.parse(iso) + 2 * 3600_000).toISOString().replace("Z", "+02:00")
    assert.deepStrictEqual(ours((await list(q(plusTwo(at("b")), plusTwo(at("d"))))).items), ["c", "b"])
    assert.deepStrictEqual(ours((await list(`from=${encodeURIComponent(at("d"))}`)).items), ["e", "d"])
    assert.deepStrictEqual(ours((await list(`to=${encodeURIComponent(at("b"))}`)).items), ["a"])
  })

  it("pages with next_cursor, with and without filters, visiting each entry once", async () => {
    const first = await list("bot_id=11&limit=2")
    assert.deepStrictEqual(ours(first.items), ["d", "c"])
    assert.isString(first.next_cursor)
    const second = await list(`bot_id=11&limit=2&cursor=${first.next_cursor}`)
    assert.deepStrictEqual(ours(second.items), ["a"])
    assert.isNull(second.next_cursor)

    const seen: Array<number> = []
    let cursor: string | null = null
    do {
      const page: { items: Array<any>; next_cursor: string | null } = await list(
        `limit=2${cursor === null ? "" : `&cursor=${cursor}`}`
      )
      assert.isAtMost(page.items.length, 2)
      seen.push(...page.items.map((item) => item.id as number))
      cursor = page.next_cursor
    } while (cursor !== null)
    assert.deepStrictEqual(seen, [...seen].sort((x, y) => y - x), "newest first")
    assert.strictEqual(new Set(seen).size, seen.length, "no entry twice")
    assert.includeMembers(seen, Object.values(ids))
  })

  it("is for admins: 403 for an operator key, 401 without a key", async () => {
    assertError(await server.call("/api/audit", { key: operatorKey }), 403, "forbidden")
    assertError(await server.call("/api/audit", { key: null }), 401, "unauthorized")
  })

  it("refuses bad values with 400 and a sentence naming the field", async () => {
    const cases: Array<readonly [string, string]> = [
      ["from=2025-01-31", "from must be an ISO 8601 date-time"],
      ["to=yesterday", "to must be an ISO 8601 date-time"],
      ["from=2025-02-30T00:00:00Z", "from must be an ISO 8601 date-time"],
      ["limit=0", "limit must be an integer from 1 to 200"],
      ["limit=201", "limit must be an integer from 1 to 200"],
      ["limit=ten", "limit must be an integer from 1 to 200"],
      ["cursor=not!a!cursor", "cursor must be a next_cursor this endpoint returned"],
      ["cursor=WzAsMV0", "cursor must be a next_cursor this endpoint returned"],
      ["actor_type=robot", "actor_type must be account, key, cli or system"],
      ["actor_id=-1", "actor_id must be a non-negative integer"],
      ["bot_id=0", "bot_id must be a positive integer"],
      [`action=${"x".repeat(101)}`, "action must be 1 to 100 characters"]
    ]
    for (const [query, sentence] of cases) {
      const reply = await server.call(`/api/audit?${query}`)
      assertError(reply, 400, "invalid_request")
      assert.include(reply.json.error, sentence, query)
    }
  })
})

describe("BOTRELAY_AUDIT_RETENTION", () => {
  it("is a duration, 365 days by default, and reaches the runtime", () => {
    assert.strictEqual(Config.fromValues({}, {}).auditRetention, 365 * 86400)
    assert.strictEqual(Config.fromValues({}, { BOTRELAY_AUDIT_RETENTION: "30d" }).auditRetention, 30 * 86400)
    assert.strictEqual(
      Config.fromValues({ "audit-retention": "12h" }, { BOTRELAY_AUDIT_RETENTION: "30d" }).auditRetention,
      12 * 3600
    )
    assert.throws(() => Config.fromValues({}, { BOTRELAY_AUDIT_RETENTION: "forever" }), /BOTRELAY_AUDIT_RETENTION/)
    const options = Main.botrelayOptions(Config.fromValues({ "audit-retention": "90d" }, {}))
    assert.strictEqual(Duration.toMillis(options.audit!.retention!), 90 * 86400_000)
  })

  it("entries older than the retention are deleted when the server starts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "botrelay-audit-"))
    const first = await startServer({ dir })
    await record(first, entry({ action: "test.old" }))
    await first.close()
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const second = await startServer({ dir, flags: { "audit-retention": "1s" } })
    try {
      await record(second, entry({ action: "test.new" }))
      const actions = await eventually(async () => {
        const reply = await second.call("/api/audit?actor_id=901")
        const found = reply.json.items.map((item: any) => item.action)
        return found.includes("test.old") ? undefined : found
      })
      assert.deepStrictEqual(actions, ["test.new"])
    } finally {
      await second.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
