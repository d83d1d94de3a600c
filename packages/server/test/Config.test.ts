import { FakeTelegram, PgCluster } from "@botrelay/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, startServer, storages, type TestServer, startTwoInstances } from "./Harness.js"

/** Every property name anywhere in a JSON value. */
const propertyNames = (value: unknown, into: Set<string> = new Set()): Set<string> => {
  if (Array.isArray(value)) for (const item of value) propertyNames(item, into)
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      into.add(key)
      propertyNames(item, into)
    }
  }
  return into
}

/** An export without what changes by itself (when it was made) and with route ids left out (recreated routes get new ones). */
const comparable = (document: any) => ({
  ...document,
  bots: document.bots.map((b: any) => ({ ...b, username: undefined })),
  exported_at: undefined,
  revision: undefined,
  routes: document.routes.map((r: any) => ({ ...r, id: undefined })),
  tags: document.tags.map((t: any) => ({ ...t, id: undefined })),
  keys: document.keys.map((k: any) => ({ ...k, last_used_at: undefined })),
  accounts: document.accounts.map((a: any) => ({ ...a, last_login_at: undefined }))
})

const entry = (diff: ReadonlyArray<any>, kind: string, op: string, id?: number | string) =>
  diff.find((e) => e.kind === kind && e.op === op && (id === undefined || e.id === id))

describe.each(storages)("configuration as data (%s)", (storage) => {
  let fake: FakeTelegram.FakeTelegram
  let server: TestServer
  let support: { readonly id: number; readonly tg: FakeTelegram.FakeBot }
  let staff: { readonly id: number; readonly tg: FakeTelegram.FakeBot }
  let operatorKey: { readonly id: number; readonly key: string }
  let accountId: number
  let routeId: number
  let customer: ReturnType<FakeTelegram.FakeTelegram["addUser"]>
  const password = "operator password 1"
  const llmKey = "sk-config-test-abcdwxyz"

  const exportDocument = async () => {
    const reply = await server.call("/api/config/export")
    assert.strictEqual(reply.status, 200, reply.text)
    return reply
  }
  const importDocument = (document: unknown, query = "") =>
    server.call(`/api/config/import${query}`, { body: document })

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    server = await startServer({ storage, telegramApi: fake.apiRoot })
    const add = async (name: string, username: string) => {
      const tg = fake.addBot({ username })
      const reply = await server.call("/api/bots/add", {
        body: { token: tg.token, name, manage_enabled: true, secret_token: "bot-secret-token-1" }
      })
      assert.strictEqual(reply.status, 200, reply.text)
      return { id: reply.json.id as number, tg }
    }
    support = await add("support", "support_bot")
    staff = await add("staff", "staff_bot")
    customer = fake.addUser({ first_name: "Ann", username: "ann" })
    const route = await server.call("/api/routes/add", {
      body: { source_bot_id: support.id, target_bot_id: staff.id, action: "copy", description: "desk" }
    })
    assert.strictEqual(route.status, 200, route.text)
    routeId = route.json.id
    const tag = await server.call("/api/tags/add", {
      body: { bot_id: support.id, chat_id: customer.id, user_id: customer.id, username: "ann", tag: "vip", color: "#abc" }
    })
    assert.strictEqual(tag.status, 200, tag.text)
    const key = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator", bot_ids: [support.id] } })
    assert.strictEqual(key.status, 200, key.text)
    operatorKey = { id: key.json.id, key: key.json.key }
    const account = await server.call("/api/accounts", {
      body: { username: "olga", display_name: "Olga", password, role: "operator", bot_ids: [support.id] }
    })
    assert.strictEqual(account.status, 200, account.text)
    accountId = account.json.id
    const llm = await server.call("/api/llm", { body: { base_url: "https://llm.example.com/v1", api_key: llmKey, model: "m1" } })
    assert.strictEqual(llm.status, 200, llm.text)
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await fake?.close()
  })

  it("exports bots, routes, tags, keys, accounts and settings with a revision, and no secret anywhere", async () => {
    const reply = await exportDocument()
    const doc = reply.json
    assert.strictEqual(doc.version, 1)
    assert.isAbove(doc.revision, 0)
    assert.isString(doc.exported_at)
    assert.deepStrictEqual(doc.bots.map((b: any) => [b.id, b.name, b.manage_enabled]), [
      [support.id, "support", true],
      [staff.id, "staff", true]
    ])
    assert.deepStrictEqual(doc.routes.map((r: any) => [r.id, r.source_bot_id, r.target_bot_id, r.action]), [
      [routeId, support.id, staff.id, "copy"]
    ])
    assert.deepStrictEqual(doc.tags.map((t: any) => [t.tag, t.color]), [["vip", "#abc"]])
    assert.includeMembers(doc.keys.map((k: any) => k.name), ["desk"])
    assert.deepStrictEqual(doc.accounts.map((a: any) => [a.id, a.username, a.display_name]), [[accountId, "olga", "Olga"]])
    assert.deepStrictEqual(doc.settings, { llm: { base_url: "https://llm.example.com/v1", model: "m1", timeout_ms: 10000 } })
    for (const secret of [
      support.tg.token,
      support.tg.token.split(":")[1]!,
      staff.tg.token.split(":")[1]!,
      "bot-secret-token-1",
      operatorKey.key,
      server.adminKey,
      password,
      llmKey
    ]) assert.notInclude(reply.text, secret)
    const names = propertyNames(doc)
    for (const name of ["token", "secret_token", "hash", "password", "password_hash", "api_key", "key"]) {
      assert.isFalse(names.has(name), name)
    }
  })

  it("is for admins: an operator gets 403 on both", async () => {
    const doc = (await exportDocument()).json
    assertError(await server.call("/api/config/export", { key: operatorKey.key }), 403, "forbidden")
    assertError(await server.call("/api/config/import", { key: operatorKey.key, body: doc }), 403, "forbidden")
  })

  it("bumps the revision once per change through the API", async () => {
    const before = (await exportDocument()).json.revision
    assert.strictEqual((await server.call("/api/bots/update", { body: { id: staff.id, description: "the team" } })).status, 200)
    assert.strictEqual((await exportDocument()).json.revision, before + 1)
    assert.strictEqual((await server.call(`/api/auth/api-keys/toggle?id=${operatorKey.id}`, { method: "POST" })).status, 200)
    assert.strictEqual((await server.call(`/api/auth/api-keys/toggle?id=${operatorKey.id}`, { method: "POST" })).status, 200)
    assert.strictEqual((await exportDocument()).json.revision, before + 3)
  })

  it("a dry run answers the diff and changes nothing; a moved revision is 409 revision_moved", async () => {
    const doc = (await exportDocument()).json
    const audits = (await server.call("/api/audit?action=config.import")).json.items.length
    const edited = { ...doc, bots: doc.bots.map((b: any) => b.id === support.id ? { ...b, name: "helpdesk" } : b) }
    const dry = await importDocument(edited, "?dry_run=true")
    assert.strictEqual(dry.status, 200, dry.text)
    assert.deepStrictEqual(dry.json, {
      revision: doc.revision,
      diff: [{ op: "update", kind: "bot", id: support.id, changes: { name: ["support", "helpdesk"] } }]
    })
    const after = (await exportDocument()).json
    assert.strictEqual(after.revision, doc.revision)
    assert.strictEqual(after.bots.find((b: any) => b.id === support.id).name, "support")
    assert.strictEqual((await server.call("/api/audit?action=config.import")).json.items.length, audits)

    const moved = await importDocument({ ...edited, revision: doc.revision - 1 })
    assertError(moved, 409, "revision_moved")
    assertError(await importDocument({ ...edited, revision: doc.revision - 1 }, "?dry_run=true"), 409, "revision_moved")
    assert.strictEqual((await exportDocument()).json.bots.find((b: any) => b.id === support.id).name, "support")
  })

  it("refuses bad documents with 400 and details, changing nothing", async () => {
    const doc = (await exportDocument()).json
    const cases: Array<[unknown, string]> = [
      [{ ...doc, version: 2 }, "version"],
      [{ ...doc, bots: [{ ...doc.bots[0], id: 9999 }] }, "bots.0.id"],
      [{ ...doc, bots: [{ ...doc.bots[0], backend_url: "ftp://x" }] }, "bots.0.backend_url"],
      [{ ...doc, keys: doc.keys.map((k: any) => ({ ...k, role: k.role === "admin" ? "operator" : "admin" })) }, "keys.0.role"],
      [{ ...doc, routes: [{ ...doc.routes[0], target_bot_id: 9999 }] }, "routes.0.target_bot_id"],
      [{ ...doc, accounts: [{ ...doc.accounts[0], id: 9999 }] }, "accounts.0.id"],
      [{ ...doc, tags: [{ ...doc.tags[0], color: "not a colour" }] }, "tags.0.color"],
      [{ ...doc, routes: [doc.routes[0], doc.routes[0]] }, "routes.1.id"],
      [{ ...doc, revision: "x" }, "revision"]
    ]
    for (const [body, path] of cases) {
      const reply = await importDocument(body)
      assertError(reply, 400, "invalid_request")
      assert.isTrue(reply.json.details.some((d: any) => d.path === path), `${path}: ${reply.text}`)
    }
    assertError(await server.call("/api/config/import", { raw: "{" }), 400, "invalid_json")
    // refused by a service midway (webhook mode needs BOTRELAY_PUBLIC_URL): the changes made before are taken back
    const midway = await importDocument({
      ...doc,
      bots: doc.bots.map((b: any) => b.id === support.id ? { ...b, name: "renamed" } : { ...b, webhook_mode: true }),
      accounts: doc.accounts.map((a: any) => ({ ...a, display_name: "Renamed" }))
    })
    assertError(midway, 400, "invalid_request")
    assert.match(midway.json.error, /webhook/)
    assertError(await importDocument(doc, "?dry_run=maybe"), 400, "invalid_request")
    const after = (await exportDocument()).json
    assert.deepStrictEqual(comparable(after), comparable(doc))
    assert.strictEqual(after.revision, doc.revision)
  })

  it("round trip: importing an old export brings everything back, with a diff of each change; prune deletes what it does not list; audited", async () => {
    const original = (await exportDocument()).json

    // change everything through the API
    const call = async (path: string, body?: unknown) => {
      const reply = await server.call(path, body === undefined ? { method: "POST" } : { body })
      assert.strictEqual(reply.status, 200, `${path}: ${reply.text}`)
      return reply.json
    }
    await call("/api/bots/update", { id: support.id, name: "helpdesk", long_poll_enabled: true })
    await call(`/api/bots/toggle-disabled?id=${staff.id}`)
    await call(`/api/routes/delete?id=${routeId}`)
    const extraRoute = await call("/api/routes/add", { source_bot_id: staff.id, target_bot_id: support.id, action: "drop" })
    const tags = (await server.call(`/api/tags?chat_id=${customer.id}`)).json
    await call("/api/tags/add", { bot_id: support.id, chat_id: customer.id, user_id: customer.id, username: "ann", tag: "vip", color: "red" })
    const extraTag = await call("/api/tags/add", { bot_id: support.id, chat_id: customer.id, user_id: customer.id, tag: "late" })
    await call(`/api/auth/api-keys/toggle?id=${operatorKey.id}`)
    await call("/api/accounts/update", { id: accountId, display_name: "Olga K", enabled: false })
    await call("/api/llm", { model: "m2" })

    assertError(await importDocument(original), 409, "revision_moved")
    const revision = (await exportDocument()).json.revision

    const imported = await importDocument({ ...original, revision }, "?prune=true")
    assert.strictEqual(imported.status, 200, imported.text)
    const diff = imported.json.diff
    assert.strictEqual(imported.json.revision, revision + 1)
    assert.deepStrictEqual(entry(diff, "bot", "update", support.id).changes, {
      name: ["helpdesk", "support"],
      long_poll_enabled: [true, false]
    })
    assert.deepStrictEqual(entry(diff, "bot", "update", staff.id).changes, { disabled: [true, false] })
    const added = entry(diff, "route", "add")
    assert.isAbove(added.id, extraRoute.id)
    assert.deepStrictEqual(added.changes.action, [null, "copy"])
    assert.deepStrictEqual(entry(diff, "route", "delete", extraRoute.id).changes.action, ["drop", null])
    assert.deepStrictEqual(entry(diff, "tag", "update", tags[0].id).changes, { color: ["red", "#abc"] })
    assert.deepStrictEqual(entry(diff, "tag", "delete", extraTag.id).changes.tag, ["late", null])
    assert.deepStrictEqual(entry(diff, "key", "update", operatorKey.id).changes, { enabled: [false, true] })
    assert.deepStrictEqual(entry(diff, "account", "update", accountId).changes, {
      display_name: ["Olga K", "Olga"],
      enabled: [false, true]
    })
    assert.deepStrictEqual(entry(diff, "settings", "update", "llm").changes, { model: ["m2", "m1"] })
    assert.strictEqual(diff.length, 9, imported.text)

    const after = (await exportDocument()).json
    assert.strictEqual(after.revision, revision + 1)
    assert.deepStrictEqual(comparable(after), comparable(original))
    routeId = added.id

    // the running pipeline has the recreated route: the staff bot copies what the support bot receives
    fake.userSends(support.tg.id, { user: customer, text: "routed again" })
    await fake.waitForCall((c) => c.botId === staff.tg.id && ["copyMessage", "sendMessage", "forwardMessage"].includes(c.method))
    // the operator key works again
    assert.strictEqual((await server.call("/api/bots", { key: operatorKey.key })).status, 200)

    const audit = (await server.call("/api/audit?action=config.import")).json.items.filter((e: any) => e.outcome === "ok")
    assert.strictEqual(audit.length, 1)
    assert.strictEqual(audit[0].actor_type, "key")
    assert.deepStrictEqual(audit[0].details, { prune: true, add: 1, update: 6, delete: 2 })

    // the same document again changes nothing; without prune, routes it leaves out stay
    const again = await importDocument({ ...after, routes: [] })
    assert.deepStrictEqual(again.json, { revision: after.revision, diff: [] })
    assert.strictEqual((await server.call("/api/routes")).json.length, 1)
    const pruned = await importDocument({ ...after, routes: [] }, "?prune=true&dry_run=true")
    assert.deepStrictEqual(pruned.json.diff.map((e: any) => [e.op, e.kind, e.id]), [["delete", "route", routeId]])
  }, 60_000)
})

describe.skipIf(!PgCluster.available)("configuration as data across instances (postgres)", () => {
  let fake: FakeTelegram.FakeTelegram
  let instances: Awaited<ReturnType<typeof startTwoInstances>>
  let a: TestServer
  let b: TestServer

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    instances = await startTwoInstances({ telegramApi: fake.apiRoot })
    ;({ a, b } = instances)
  }, 60_000)
  afterAll(async () => {
    await instances?.close()
    await fake?.close()
  })

  it("every instance shares the revision, and an import on one reaches the pipeline wherever the bot runs", async () => {
    const add = async (name: string) => {
      const tg = fake.addBot()
      const reply = await a.call("/api/bots/add", { body: { token: tg.token, name } })
      assert.strictEqual(reply.status, 200, reply.text)
      return { tg, id: reply.json.id as number }
    }
    const source = await add("source")
    const target = await add("target")
    const before = (await b.call("/api/config/export")).json
    assert.strictEqual((await a.call("/api/bots/update", { body: { id: source.id, description: "front desk" } })).status, 200)
    assertError(await b.call("/api/config/import", { body: before }), 409, "revision_moved")

    const current = (await b.call("/api/config/export")).json
    assert.strictEqual(current.revision, before.revision + 1)
    const route = { id: 1_000_000, source_bot_id: source.id, target_bot_id: target.id, condition_type: "all",
      condition_value: "", action: "copy", target_chat_id: 0, enabled: true, description: "imported" }
    const imported = await b.call("/api/config/import", { body: { ...current, routes: [route] } })
    assert.strictEqual(imported.status, 200, imported.text)
    assert.strictEqual(imported.json.revision, current.revision + 1)
    assert.deepStrictEqual(imported.json.diff.map((e: any) => [e.op, e.kind]), [["add", "route"]])
    const seenOnA = (await a.call("/api/config/export")).json
    assert.strictEqual(seenOnA.revision, current.revision + 1)
    assert.deepStrictEqual(seenOnA.routes.map((r: any) => r.description), ["imported"])

    const customer = fake.addUser({ first_name: "Ann" })
    fake.userSends(source.tg.id, { user: customer, text: "through the imported route" })
    await fake.waitForCall(
      (c) => c.botId === target.tg.id && ["copyMessage", "sendMessage", "forwardMessage"].includes(c.method),
      "20 seconds"
    )
  }, 60_000)
})
