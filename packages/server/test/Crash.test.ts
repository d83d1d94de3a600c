import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, assert, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { newKey } from "./Harness.js"

const bin = resolve(import.meta.dirname, "../dist/bin.js")
const dir = mkdtempSync(join(tmpdir(), "botrelay-crash-"))
const children = new Set<ChildProcess>()
let fake: FakeTelegram.FakeTelegram | undefined
let hook: Server | undefined

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL")
  await new Promise<void>((resolve) => hook === undefined ? resolve() : hook.close(() => resolve()))
  await fake?.close()
  rmSync(dir, { recursive: true, force: true })
})

const until = async (check: () => boolean | Promise<boolean>, timeout: number, what: string) => {
  const deadline = Date.now() + timeout
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const start = async (env: Record<string, string>) => {
  const child = spawn(process.execPath, [bin], {
    env: { PATH: process.env.PATH ?? "", BOTRELAY_PORT: "0", BOTRELAY_HOST: "127.0.0.1", BOTRELAY_API_RATE_LIMIT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  child.on("exit", () => children.delete(child))
  let output = ""
  child.stdout.on("data", (chunk) => output += chunk)
  child.stderr.on("data", (chunk) => output += chunk)
  let port: string | undefined
  await until(() => {
    port = /Listening on http:\/\/[^:]+:(\d+)/.exec(output)?.[1]
    return port !== undefined || child.exitCode !== null
  }, 20_000, "the server to listen")
  assert.isDefined(port, output)
  return { child, baseUrl: `http://127.0.0.1:${port}` }
}

it("loses nothing and stores nothing twice when killed with SIGKILL mid-stream", async () => {
  fake = await FakeTelegram.start()
  const received = new Map<number, number>()
  hook = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => body += chunk)
    req.on("end", () => {
      const id = JSON.parse(body).update_id as number
      received.set(id, (received.get(id) ?? 0) + 1)
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => hook!.listen(0, "127.0.0.1", resolve))
  const backendUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`

  const adminKey = newKey()
  const env = { BOTRELAY_DATABASE: join(dir, "crash.db"), BOTRELAY_ADMIN_KEY: adminKey, BOTRELAY_TELEGRAM_API: fake.apiRoot }
  const headers = { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }
  const tg = fake.addBot()
  const user = fake.addUser()

  const first = await start(env)
  const added = await fetch(`${first.baseUrl}/api/bots/add`, {
    method: "POST",
    headers,
    body: JSON.stringify({ token: tg.token, manage_enabled: true, proxy_enabled: true, backend_url: backendUrl })
  })
  const bot = await added.json()
  assert.strictEqual(added.status, 200)

  const total = 2000
  const updateIds: Array<number> = []
  for (let i = 0; i < total; i++) {
    fake.userSends(tg.id, { user, text: `update ${i}` })
    // Not a wait: yields to the event loop so the server takes batches while the load is produced.
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 1))
  }
  for (const update of [...fake.updatesConfirmed(tg.id), ...fake.pendingUpdates(tg.id)]) updateIds.push(update.update_id)
  assert.strictEqual(new Set(updateIds).size, total)

  await until(() => received.size >= 300, 30_000, "the first deliveries")
  first.child.kill("SIGKILL")
  await new Promise((r) => first.child.once("exit", r))
  assert.isBelow(received.size, total, "the kill came too late to test anything")

  const second = await start(env)
  await until(() => updateIds.every((id) => received.has(id)), 60_000, "every update at the backend")

  const stored = new Map<number, number>()
  for (let offset = 0; offset < total + 200; offset += 200) {
    const page = await (await fetch(
      `${second.baseUrl}/api/messages?bot_id=${bot.id}&chat_id=${user.id}&limit=200&offset=${offset}`,
      { headers }
    )).json()
    for (const message of page) stored.set(message.id, (stored.get(message.id) ?? 0) + 1)
  }
  assert.strictEqual(stored.size, total)
  assert.isTrue([...stored.values()].every((n) => n === 1))
  const duplicates = [...received.values()].filter((n) => n > 1).length
  assert.isAtMost(duplicates, 100, "redelivery after the crash is limited to what was in flight")

  second.child.kill("SIGTERM")
  await new Promise((r) => second.child.once("exit", r))
}, 120_000)
