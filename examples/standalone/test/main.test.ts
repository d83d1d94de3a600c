import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { start } from "../src/main.js"

const adminKey = `brk_${"s".repeat(43)}`
const auth = { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }

let fake: FakeTelegram.FakeTelegram
let dir: string
let server: ChildProcess | undefined
let baseUrl: string

/** Resolves with the server's URL once it logs `Listening on`; rejects if it exits first. */
const listening = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    let output = ""
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Listening on http:\/\/[^:]+:(\d+)/.exec(output)
      if (match) resolve(`http://127.0.0.1:${match[1]}`)
    }
    child.stdout!.on("data", read)
    child.stderr!.on("data", read)
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}:\n${output}`)))
  })

beforeAll(async () => {
  fake = await FakeTelegram.start()
  dir = mkdtempSync(join(tmpdir(), "botrelay-standalone-"))
  server = start({
    PATH: process.env.PATH ?? "",
    BOTRELAY_PORT: "0",
    BOTRELAY_HOST: "127.0.0.1",
    BOTRELAY_DATABASE: join(dir, "botrelay.db"),
    BOTRELAY_TELEGRAM_API: fake.apiRoot,
    BOTRELAY_ADMIN_KEY: adminKey,
    BOTRELAY_LOG_LEVEL: "info"
  }, ["ignore", "pipe", "pipe"])
  baseUrl = await listening(server)
}, 30_000)

afterAll(async () => {
  if (server !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once("exit", resolve))
    server.kill("SIGTERM")
    await exited
  }
  await fake?.close()
  rmSync(dir, { recursive: true, force: true })
})

it("serves the health check", async () => {
  const health = await fetch(`${baseUrl}/api/health`)
  assert.strictEqual(health.status, 200)
  assert.deepStrictEqual(await health.json(), { status: "ok", storage: "ok" })
})

it("takes the admin key and Telegram from the environment: adds a bot, lists it and polls it", async () => {
  const tg = fake.addBot({ username: "standalone_bot" })
  const added = await fetch(`${baseUrl}/api/bots/add`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ token: tg.token, name: "standalone", manage_enabled: true })
  })
  assert.strictEqual(added.status, 200, await added.clone().text())
  const bots = await (await fetch(`${baseUrl}/api/bots`, { headers: auth })).json()
  assert.deepStrictEqual(
    bots.map((bot: { name: string; token: string }) => [bot.name, bot.token]),
    [["standalone", `${tg.id}:…${tg.token.slice(-4)}`]]
  )
  await fake.waitForPoll(tg.id)
})
