import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { start } from "../src/main.js"

const adminKey = `brk_${"e".repeat(43)}`
const auth = { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }

let fake: FakeTelegram.FakeTelegram
let dir: string
let app: Awaited<ReturnType<typeof start>>

beforeAll(async () => {
  fake = await FakeTelegram.start()
  dir = mkdtempSync(join(tmpdir(), "botrelay-express-"))
  app = await start({
    port: 0,
    host: "127.0.0.1",
    database: join(dir, "botrelay.db"),
    telegramApi: fake.apiRoot,
    adminKey,
    logLevel: "None"
  })
})

afterAll(async () => {
  await app?.close()
  await fake?.close()
  rmSync(dir, { recursive: true, force: true })
})

it("serves Botrelay's health check under /botrelay", async () => {
  const health = await fetch(`${app.url}/botrelay/api/health`)
  assert.strictEqual(health.status, 200)
  assert.deepStrictEqual(await health.json(), { status: "ok", storage: "ok" })
})

it("leaves other paths to express", async () => {
  const missing = await fetch(`${app.url}/nowhere`)
  assert.strictEqual(missing.status, 404)
  assert.notInclude(await missing.text(), "not_found")
})

it("registers bots through the HTTP API and the facade, and the app's own route sees them", async () => {
  const viaHttp = fake.addBot()
  const added = await fetch(`${app.url}/botrelay/api/bots/add`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ token: viaHttp.token, name: "via-http", manage_enabled: true })
  })
  assert.strictEqual(added.status, 200, await added.clone().text())
  await app.botrelay.bots.add({ token: fake.addBot().token, name: "via-facade" })
  const listed = await (await fetch(`${app.url}/botrelay/api/bots`, { headers: auth })).json()
  assert.deepStrictEqual(listed.map((bot: { name: string }) => bot.name), ["via-http", "via-facade"])
  const home = await fetch(`${app.url}/`)
  assert.deepStrictEqual(await home.json(), { app: "express", bots: ["via-http", "via-facade"] })
  await fake.waitForPoll(viaHttp.id)
})
