import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, type Reply, replyOf, startServer, type TestServer } from "./Harness.js"

let server: TestServer

/** A browser's request: the session cookie, and the CSRF token and Origin when given. */
const browser = async (
  path: string,
  init: {
    readonly session?: string
    readonly csrf?: string
    readonly origin?: string
    readonly body?: unknown
    readonly method?: string
  } = {}
): Promise<Reply> => {
  const headers: Record<string, string> = {}
  if (init.session !== undefined) headers.cookie = `botrelay_session=${init.session}`
  if (init.csrf !== undefined) headers["x-csrf-token"] = init.csrf
  if (init.origin !== undefined) headers.origin = init.origin
  if (init.body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  return replyOf(response)
}

/** Signs in: the session from the cookie, and the CSRF token. */
const login = async (username: string, password: string) => {
  const reply = await browser("/api/auth/login", { body: { username, password } })
  assert.strictEqual(reply.status, 200, reply.text)
  const cookie = reply.headers.get("set-cookie") ?? ""
  const session = /botrelay_session=([^;]+)/.exec(cookie)?.[1]
  assert.isString(session)
  return { session: session!, csrf: reply.json.csrf_token as string, cookie, account: reply.json.account }
}

const createAccount = async (body: Record<string, unknown>) => {
  const reply = await server.call("/api/accounts", { body })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json
}

/** The newest audit entries, newest first. */
const audit = async (query = "") => (await server.call(`/api/audit?limit=200${query}`)).json.items as Array<any>

beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.close()
})

describe("accounts and sessions", () => {
  it("an admin key creates an account; the password is never returned; bad input is a 400 or 409", async () => {
    const created = await createAccount({ username: "Alice", display_name: "Alice A.", role: "admin", password: "correct horse battery" })
    assert.deepInclude(created, { username: "Alice", display_name: "Alice A.", role: "admin", bot_ids: [], enabled: true, last_login_at: "" })
    assert.notProperty(created, "password")
    assert.notInclude(JSON.stringify(created), "correct horse")
    assertError(await server.call("/api/accounts", { body: { username: "bob", password: "short" } }), 400, "invalid_request")
    assertError(await server.call("/api/accounts", { body: { username: "ALICE", password: "long enough pw" } }), 409, "username_taken")
    assertError(await server.call("/api/accounts/update", { body: { id: 9999, display_name: "x" } }), 404, "account_not_found")
    const list = await server.call("/api/accounts")
    assert.deepStrictEqual(list.json.map((a: any) => a.username), ["Alice"])
  })

  it("login sets an HttpOnly, SameSite=Strict session cookie; me answers the account and its CSRF token; logout ends it", async () => {
    const alice = await login("alice", "correct horse battery")
    assert.match(alice.cookie, /HttpOnly/)
    assert.match(alice.cookie, /SameSite=Strict/)
    assert.match(alice.cookie, /Path=\//)
    assert.notMatch(alice.cookie, /Secure/)
    assert.strictEqual(alice.account.username, "Alice")
    assert.match(alice.csrf, /^[A-Za-z0-9_-]{20,}$/)
    const me = await browser("/api/auth/me", { session: alice.session })
    assert.strictEqual(me.status, 200, me.text)
    assert.strictEqual(me.json.account.id, alice.account.id)
    assert.strictEqual(me.json.csrf_token, alice.csrf)
    assert.notStrictEqual(me.json.account.last_login_at, "")
    assert.strictEqual((await browser("/api/bots", { session: alice.session })).status, 200)

    assertError(await browser("/api/auth/logout", { session: alice.session, method: "POST" }), 403, "csrf")
    const out = await browser("/api/auth/logout", { session: alice.session, csrf: alice.csrf, method: "POST" })
    assert.strictEqual(out.status, 200, out.text)
    assert.match(out.headers.get("set-cookie") ?? "", /botrelay_session=;|Max-Age=0|Expires=Thu, 01 Jan 1970/)
    assertError(await browser("/api/auth/me", { session: alice.session }), 401, "unauthorized")
    assertError(await browser("/api/auth/me", { session: "not-a-session" }), 401, "unauthorized")
    assertError(await browser("/api/auth/me"), 401, "unauthorized")
  })

  it("a wrong password and an unknown name get the same 401", async () => {
    const wrong = await browser("/api/auth/login", { body: { username: "alice", password: "wrong password!" } })
    const unknown = await browser("/api/auth/login", { body: { username: "nobody", password: "wrong password!" } })
    assertError(wrong, 401, "invalid_credentials")
    assert.deepStrictEqual(wrong.json, unknown.json)
    assert.strictEqual(wrong.json.error, "invalid username or password")
  })

  it("CSRF: a cookie-authenticated change needs the token and our origin; reads and Bearer keys do not", async () => {
    const alice = await login("alice", "correct horse battery")
    const key = { body: { name: "from the browser" } }
    assertError(await browser("/api/auth/api-keys", { session: alice.session, ...key }), 403, "csrf")
    assertError(await browser("/api/auth/api-keys", { session: alice.session, csrf: "x".repeat(43), ...key }), 403, "csrf")
    assertError(
      await browser("/api/auth/api-keys", { session: alice.session, csrf: alice.csrf, origin: "https://evil.example", ...key }),
      403,
      "csrf"
    )
    assertError(
      await browser("/api/auth/api-keys", { session: alice.session, csrf: alice.csrf, origin: "null", ...key }),
      403,
      "csrf"
    )
    const ok = await browser("/api/auth/api-keys", { session: alice.session, csrf: alice.csrf, origin: server.baseUrl, ...key })
    assert.strictEqual(ok.status, 200, ok.text)
    assert.strictEqual((await browser("/api/auth/api-keys", { session: alice.session })).status, 200)
    assert.strictEqual((await server.call("/api/auth/api-keys", { body: { name: "by key" } })).status, 200)
  })

  it("operators: their bots only, no account or audit endpoints, no role for themselves", async () => {
    const op = await createAccount({ username: "olga", role: "operator", password: "operator password" })
    const olga = await login("olga", "operator password")
    const csrf = { session: olga.session, csrf: olga.csrf }
    assertError(await browser("/api/accounts", { session: olga.session }), 403, "forbidden")
    assertError(await browser("/api/audit", { session: olga.session }), 403, "forbidden")
    assertError(await browser("/api/accounts/update", { ...csrf, body: { id: op.id, role: "admin" } }), 403, "forbidden")
    assertError(await browser("/api/messages?bot_id=1&chat_id=1", { session: olga.session }), 403, "forbidden")
    assert.strictEqual((await server.call("/api/accounts")).json.find((a: any) => a.id === op.id).role, "operator")
  })

  it("changing one's own password needs the old one, keeps this session and ends the others", async () => {
    await createAccount({ username: "carol", role: "operator", password: "carol password 1" })
    const first = await login("carol", "carol password 1")
    const second = await login("carol", "carol password 1")
    assertError(
      await browser("/api/accounts/password", {
        session: first.session,
        csrf: first.csrf,
        body: { old_password: "not the password", new_password: "carol password 2" }
      }),
      400,
      "wrong_password"
    )
    const changed = await browser("/api/accounts/password", {
      session: first.session,
      csrf: first.csrf,
      body: { old_password: "carol password 1", new_password: "carol password 2" }
    })
    assert.strictEqual(changed.status, 200, changed.text)
    assert.strictEqual((await browser("/api/auth/me", { session: first.session })).status, 200)
    assertError(await browser("/api/auth/me", { session: second.session }), 401, "unauthorized")
    assertError(await browser("/api/auth/login", { body: { username: "carol", password: "carol password 1" } }), 401, "invalid_credentials")
    await login("carol", "carol password 2")
  })

  it("a role or scope change, disabling, an admin reset or deletion ends the account's sessions", async () => {
    const dave = await createAccount({ username: "dave", role: "operator", password: "dave password 1" })
    const s1 = await login("dave", "dave password 1")
    assert.strictEqual((await server.call("/api/accounts/update", { body: { id: dave.id, role: "admin" } })).status, 200)
    assertError(await browser("/api/auth/me", { session: s1.session }), 401, "unauthorized")
    const s2 = await login("dave", "dave password 1")
    assert.strictEqual((await server.call("/api/accounts/update", { body: { id: dave.id, enabled: false } })).status, 200)
    assertError(await browser("/api/auth/me", { session: s2.session }), 401, "unauthorized")
    assertError(await browser("/api/auth/login", { body: { username: "dave", password: "dave password 1" } }), 401, "invalid_credentials")
    assert.strictEqual((await server.call("/api/accounts/update", { body: { id: dave.id, enabled: true } })).status, 200)
    const s3 = await login("dave", "dave password 1")
    const reset = await server.call("/api/accounts/password", { body: { id: dave.id, new_password: "dave password 2" } })
    assert.strictEqual(reset.status, 200, reset.text)
    assertError(await browser("/api/auth/me", { session: s3.session }), 401, "unauthorized")
    const s4 = await login("dave", "dave password 2")
    assert.strictEqual((await server.call(`/api/accounts/delete?id=${dave.id}`, { method: "POST" })).status, 200)
    assertError(await browser("/api/auth/me", { session: s4.session }), 401, "unauthorized")
  })

  it("the last enabled admin account cannot be deleted, disabled or demoted", async () => {
    const admins = (await server.call("/api/accounts")).json.filter((a: any) => a.role === "admin" && a.enabled)
    for (const extra of admins.slice(1)) {
      assert.strictEqual((await server.call(`/api/accounts/delete?id=${extra.id}`, { method: "POST" })).status, 200)
    }
    const last = admins[0]
    assertError(await server.call(`/api/accounts/delete?id=${last.id}`, { method: "POST" }), 409, "last_admin")
    assertError(await server.call("/api/accounts/update", { body: { id: last.id, enabled: false } }), 409, "last_admin")
    assertError(await server.call("/api/accounts/update", { body: { id: last.id, role: "operator" } }), 409, "last_admin")
    assert.strictEqual((await server.call("/api/accounts")).json.find((a: any) => a.id === last.id).role, "admin")
  })

  it("5 failures for a name give 429 with Retry-After, even with the right password; other names go on", async () => {
    await createAccount({ username: "erin", role: "operator", password: "erin password 1" })
    for (let i = 0; i < 5; i++) {
      assertError(await browser("/api/auth/login", { body: { username: "erin", password: `wrong ${i} password` } }), 401, "invalid_credentials")
    }
    const throttled = await browser("/api/auth/login", { body: { username: "ERIN", password: "erin password 1" } })
    assertError(throttled, 429, "too_many_attempts")
    const retryAfter = Number(throttled.headers.get("retry-after"))
    assert.isAtLeast(retryAfter, 1)
    assert.isAtMost(retryAfter, 15 * 60)
    await login("alice", "correct horse battery")
  })
})

describe("audit log", () => {
  it("records each action once with its actor and outcome, denied attempts too, and never a secret", async () => {
    const alice = await login("alice", "correct horse battery")
    const before = (await audit())[0]?.id ?? 0
    const key = await browser("/api/auth/api-keys", {
      session: alice.session,
      csrf: alice.csrf,
      body: { name: "audited key" }
    })
    assert.strictEqual(key.status, 200, key.text)
    await browser("/api/auth/login", { body: { username: "alice", password: "not her password" } })
    const olga = await login("olga", "operator password")
    await browser("/api/routes", { session: olga.session })
    await server.call(`/api/auth/api-keys/toggle?id=${key.json.id}`, { method: "POST" })
    await server.call("/api/bots", { key: key.json.key })

    const entries = (await audit()).filter((e) => e.id > before).reverse()
    const shown = entries.map((e) => [e.action, e.actor_type, e.actor_name, e.outcome])
    assert.deepStrictEqual(shown, [
      ["keys.create", "account", "Alice", "ok"],
      ["auth.login", "account", "alice", "denied"],
      ["auth.login", "account", "olga", "ok"],
      ["routes.list", "account", "olga", "denied"],
      ["keys.toggle", "key", "admin (BOTRELAY_ADMIN_KEY)", "ok"],
      ["auth.key", "key", "audited key", "denied"]
    ])
    const created = entries[0]
    assert.deepInclude(created, { target_type: "key", target_id: String(key.json.id), outcome: "ok" })
    assert.strictEqual(created.ip, "127.0.0.1")
    assert.match(created.at, /^\d{4}-\d{2}-\d{2}T/)
    const everything = JSON.stringify(await audit()) + server.logs.join("\n")
    for (const secret of [key.json.key, alice.session, olga.session, "correct horse battery", "not her password"]) {
      assert.notInclude(everything, secret)
    }
  })

  it("each change leaves exactly one entry, failed ones too, with no token or password in it", async () => {
    const alice = await login("alice", "correct horse battery")
    const before = (await audit())[0]!.id
    const asAlice = (path: string, body?: unknown) =>
      browser(path, { session: alice.session, csrf: alice.csrf, method: "POST", ...(body === undefined ? {} : { body }) })
    const token = "123456789:AAH-not-a-real-token-but-shaped-like-one"
    await asAlice("/api/bots/add", { token })
    await asAlice("/api/llm", { model: "gpt-test", api_key: "sk-secret-llm-key-123" })
    const olga = (await server.call("/api/accounts")).json.find((a: any) => a.username === "olga")
    await asAlice("/api/accounts/update", { id: olga.id, display_name: "Olga" })
    await asAlice("/api/accounts/password", { id: olga.id, new_password: "olga's new password" })
    await asAlice("/api/auth/logout")
    const entries = (await audit()).filter((e) => e.id > before).reverse()
    assert.deepStrictEqual(entries.map((e) => [e.action, e.actor_name]), [
      ["bots.add", "Alice"],
      ["settings.update", "Alice"],
      ["accounts.update", "Alice"],
      ["accounts.password", "Alice"],
      ["auth.logout", "Alice"]
    ])
    assert.deepStrictEqual(entries.slice(1).map((e) => e.outcome), ["ok", "ok", "ok", "ok"])
    assert.include(["ok", "failed"], entries[0].outcome)
    assert.deepInclude(entries[3], { target_type: "account", target_id: String(olga.id) })
    const everything = JSON.stringify(entries) + server.logs.join("\n")
    for (const secret of [token, "AAH-not-a-real-token", "sk-secret-llm-key-123", "olga's new password", alice.session]) {
      assert.notInclude(everything, secret)
    }
  })

  it("filters by action, actor and bot, and pages by cursor, newest first", async () => {
    const logins = await server.call("/api/audit?action=auth.login&limit=2")
    assert.strictEqual(logins.status, 200, logins.text)
    assert.strictEqual(logins.json.items.length, 2)
    assert.isTrue(logins.json.items.every((e: any) => e.action === "auth.login"))
    assert.isAbove(logins.json.items[0].id, logins.json.items[1].id)
    const next = await server.call(`/api/audit?action=auth.login&limit=2&cursor=${logins.json.next_cursor}`)
    assert.isBelow(next.json.items[0].id, logins.json.items[1].id)
    const keyed = await server.call("/api/audit?actor_type=key")
    assert.isTrue(keyed.json.items.every((e: any) => e.actor_type === "key"))
    assertError(await server.call("/api/audit?limit=0"), 400, "invalid_request")
  })
})
