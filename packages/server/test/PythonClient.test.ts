import { spawn, spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { FakeTelegram } from "@botrelay/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { eventually, startServer, type TestServer } from "./Harness.js"

// Debian's python3-python-telegram-bot (13.x), a client in another language: .ci/run installs it for
// Debian's own Python (a python3 earlier on the PATH, such as pyenv's, does not see it).
const python = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3"
const hasPtb = spawnSync(python, ["-c", "import telegram"]).status === 0
if (!hasPtb) console.warn("python-telegram-bot is missing: apt-get install python3-python-telegram-bot")

const script = fileURLToPath(new URL("./fixtures/ptb_client.py", import.meta.url))

let fake: FakeTelegram.FakeTelegram
let server: TestServer

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

describe.skipIf(!hasPtb)("python-telegram-bot through /tgapi", () => {
  it("sends, long polls with its float timeout held as Telegram holds it, and is refused a private webhook", async () => {
    const tg = fake.addBot()
    const user = fake.addUser()
    const added = await server.call("/api/bots/add", {
      body: { token: tg.token, manage_enabled: true, long_poll_enabled: true }
    })
    assert.strictEqual(added.status, 200, added.text)
    const child = spawn(python, [script, server.baseUrl, tg.token, String(user.id)], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk) => void (stderr += chunk))
    const lines: Array<any> = []
    createInterface({ input: child.stdout }).on("line", (line) => {
      const step = JSON.parse(line)
      lines.push(step)
      if (step.step === "polling") fake.userSends(tg.id, { user, text: "sent while python polls" })
    })
    const exit = await new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.strictEqual(exit, 0, stderr)
    const step = (name: string) => lines.find((l) => l.step === name)
    assert.strictEqual(step("me").username, tg.username)
    assert.strictEqual(step("empty").count, 0)
    assert.isAtLeast(step("empty").seconds, 1.9, "a timeout of 2.5 holds the poll for 2 s, as Telegram does")
    assert.deepStrictEqual(step("updates").texts, ["sent while python polls"])
    assert.match(step("webhook").error, /bad webhook: .*127\.0\.0\.1 is reserved/i)
    assert.strictEqual(step("info").url, "")
    const history = await eventually(async () => {
      const page = await server.call(`/api/messages?bot_id=${added.json.id}&chat_id=${user.id}`)
      return page.json.some((m: any) => m.text === "hello from python") ? page.json : undefined
    })
    assert.include(history.map((m: any) => m.direction), "out")
  }, 30_000)
})
