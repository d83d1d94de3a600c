import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { HttpServer } from "@effect/platform"
import type { FakeTelegram } from "@botrelay/testing"
import { Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Demo from "../src/Demo.js"
import * as DemoPictures from "../src/DemoPictures.js"
import { eventually, replyOf } from "./Harness.js"

const bin = resolve(import.meta.dirname, "../dist/bin.js")

describe("the demo world, in-process at high speed", () => {
  const logs: Array<string> = []
  let runtime: ManagedRuntime.ManagedRuntime<Demo.Demo | HttpServer.HttpServer, unknown>
  let world: Demo.World
  const api = async (path: string, init: { readonly body?: unknown; readonly key?: string | null } = {}) => {
    const headers: Record<string, string> = {}
    if (init.key !== null) headers.authorization = `Bearer ${init.key ?? world.adminKey}`
    if (init.body !== undefined) headers["content-type"] = "application/json"
    return replyOf(
      await fetch(new URL(path, world.url), {
        method: init.body === undefined ? "GET" : "POST",
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
      })
    )
  }
  /** The support bot's stored messages of every customer, oldest first. */
  const supportMessages = async () => {
    const all: Array<any> = []
    for (const customer of world.customers) {
      const page = await api(`/api/messages?bot_id=${world.support.id}&chat_id=${customer.id}&limit=200`)
      all.push(...page.json.reverse())
    }
    return all
  }

  beforeAll(async () => {
    runtime = ManagedRuntime.make(
      Demo.layer({ port: 0, speed: 100, seed: 7 }).pipe(
        Layer.provide(Logger.replace(Logger.defaultLogger, Logger.map(Logger.jsonLogger, (line) => void logs.push(line)))),
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
      )
    )
    world = await runtime.runPromise(Demo.Demo)
  })
  afterAll(async () => {
    await runtime?.dispose()
    if (world !== undefined) assert.isFalse(existsSync(world.dir), `${world.dir} is still there`)
  })

  it("people fill the support bot's chats with texts, photos and button presses; the backend answers", async () => {
    assert.match(world.url, /^http:\/\/127\.0\.0\.1:\d+\/$/)
    assert.strictEqual(world.customers.length, 20)
    const messages = await eventually(async () => {
      const all = await supportMessages()
      const kinds = new Set(all.map((m) => m.media_type ?? (m.direction === "out" ? "out" : "text")))
      return kinds.has("photo") && kinds.has("callback") && kinds.has("out") && kinds.has("text") ? all : undefined
    }, 15_000)
    const chats = await api(`/api/chats?bot_id=${world.support.id}&limit=100`)
    assert.isAtLeast(chats.json.items.length, 5)
    assert.isTrue(messages.some((m) => m.text === "/start"))
    // The backend's greeting came back as a webhook reply and was kept in the history.
    assert.isTrue(messages.some((m) => m.direction === "out" && /Northwind/.test(m.text)))
    // A photo is a real JPEG, served through /api/media.
    const photo = messages.find((m) => m.media_type === "photo")
    const media = await fetch(new URL(`/api/media?bot_id=${world.support.id}&file_id=${encodeURIComponent(photo.file_id)}`, world.url), {
      headers: { authorization: `Bearer ${world.adminKey}` }
    })
    assert.strictEqual(media.status, 200)
    assert.strictEqual(media.headers.get("content-type"), "image/jpeg")
    const bytes = new Uint8Array(await media.arrayBuffer())
    assert.deepStrictEqual([...bytes.slice(0, 2), ...bytes.slice(-2)], [0xff, 0xd8, 0xff, 0xd9])
    // The backend got the updates, button presses included, and answered the presses.
    assert.isAbove(world.backend.count(), 0)
    assert.isTrue(world.backend.received().some((u: any) => u.callback_query !== undefined))
    await world.fake.waitForCall((call) => call.method === "answerCallbackQuery" && call.status === 200)
  })

  it("a customer's message reaches the staff group, and a staff reply there reaches the customer", async () => {
    const customerIds = new Set(world.customers.map((c) => c.id))
    const routed = await world.fake.waitForSent((sent) =>
      sent.botId === world.staff.telegram.id && sent.message.chat.id === world.staffGroup.id, "15 seconds")
    assert.match(routed.message.text ?? routed.message.caption ?? "", /\(.*id \d+\):/)
    const back: FakeTelegram.SentMessage = await world.fake.waitForSent((sent) =>
      sent.botId === world.support.telegram.id && customerIds.has(sent.message.chat.id) &&
      sent.message.reply_to_message !== undefined && sent.message.reply_to_message.from?.is_bot === false, "15 seconds")
    // The reply went back to the customer's own message, with a staff member's words.
    assert.strictEqual(back.message.reply_to_message!.from!.id, back.message.chat.id)
    const staffSaid = await api(`/api/messages?bot_id=${world.staff.id}&chat_id=${world.staffGroup.id}&limit=200`)
    const said = staffSaid.json.find((m: any) => m.text === back.message.text)
    assert.isDefined(said, back.message.text)
    assert.isTrue(world.staffMembers.some((member) => member.id === said.user_id))
    assert.isAbove(said.reply_to_message_id, 0)
  })

  it("the news bot posts to its channel", async () => {
    const post = await world.fake.waitForSent((sent) =>
      sent.botId === world.news.telegram.id && sent.message.chat.id === world.channel.id, "15 seconds")
    assert.isString(post.message.text)
  })

  it("the printed login signs in to the console", async () => {
    const banner = Demo.banner(world)
    assert.include(banner, world.url)
    const [, username, password] = /Sign in:\s+(\S+) \/ (\S+)/.exec(banner) ?? []
    const login = await api("/api/auth/login", { body: { username, password }, key: null })
    assert.strictEqual(login.status, 200, login.text)
    assert.strictEqual(login.json.account.username, "demo")
    assert.strictEqual(login.json.account.role, "admin")
    const wrong = await api("/api/auth/login", { body: { username, password: `${password}x` }, key: null })
    assert.strictEqual(wrong.status, 401)
    assert.deepStrictEqual(logs, [])
  })
})

describe("the demo's pictures", () => {
  it("are baseline JPEGs of the stated size", () => {
    for (const subject of ["parcel", "receipt", "screenshot", "item", "view"] as const) {
      const picture = DemoPictures.photo(subject, 3)
      assert.strictEqual(picture.width, 320)
      assert.strictEqual(picture.height, 240)
      const bytes = picture.bytes
      assert.deepStrictEqual([...bytes.slice(0, 2), ...bytes.slice(-2)], [0xff, 0xd8, 0xff, 0xd9])
      const sof = bytes.findIndex((b, i) => b === 0xff && bytes[i + 1] === 0xc0)
      assert.deepStrictEqual([...bytes.slice(sof + 5, sof + 9)], [0, 240, 1, 64])
      assert.isBelow(bytes.length, 10_000)
    }
  })
})

describe("loading", () => {
  it("serving loads neither the demo nor @botrelay/testing: only the demo command imports them, lazily", () => {
    /** The modules `file` imports for their values (not `import type`, not `import()`), followed through the package. */
    const reached = new Set<string>()
    const follow = (file: string) => {
      if (reached.has(file)) return
      reached.add(file)
      const source = readFileSync(file, "utf8")
      for (const match of source.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gm)) {
        const specifier = match[1]!
        if (specifier.startsWith(".")) follow(join(dirname(file), specifier.replace(/\.js$/, ".ts")))
        else reached.add(specifier)
      }
    }
    const src = resolve(import.meta.dirname, "../src")
    follow(join(src, "Entry.ts"))
    follow(join(src, "Cli.ts"))
    follow(join(src, "index.ts"))
    assert.isTrue(reached.has(join(src, "Main.ts")))
    assert.isFalse(reached.has(join(src, "Demo.ts")))
    assert.isFalse([...reached].some((module) => module.startsWith("@botrelay/testing")))
    assert.match(readFileSync(join(src, "Cli.ts"), "utf8"), /import\("\.\/Demo\.js"\)/)
  })
})

describe("botrelay demo", () => {
  const children = new Set<ChildProcess>()
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL")
  })
  beforeAll(() => {
    assert.isTrue(existsSync(bin), "build first: pnpm build")
  })

  it("prints the console address and a login, serves, and on SIGINT stops cleanly and removes its data", async () => {
    const child = spawn(process.execPath, [bin, "demo", "--port", "0", "--speed", "50"], {
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let output = ""
    child.stdout.on("data", (chunk) => output += chunk)
    child.stderr.on("data", (chunk) => output += chunk)
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    const printed = await eventually(() => {
      const url = /Console:\s+(http:\/\/127\.0\.0\.1:\d+\/)/.exec(output)?.[1]
      const login = /Sign in:\s+(\S+) \/ (\S+)/.exec(output)
      const dir = /Data:\s+(\S+)/.exec(output)?.[1]
      return url !== undefined && login !== null && dir !== undefined && /Press Ctrl-C/.test(output)
        ? { url, username: login[1]!, password: login[2]!, dir }
        : undefined
    }, 15_000).catch(() => assert.fail(`no console address and login printed:\n${output}`))
    assert.strictEqual(printed.username, "demo")
    assert.isTrue(existsSync(printed.dir))
    const health = await fetch(new URL("/api/health", printed.url))
    assert.strictEqual(health.status, 200)
    const login = await fetch(new URL("/api/auth/login", printed.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: printed.username, password: printed.password })
    })
    assert.strictEqual(login.status, 200)
    const started = Date.now()
    child.kill("SIGINT")
    assert.strictEqual(await exited, 0, output)
    children.delete(child)
    assert.isBelow(Date.now() - started, 5_000)
    assert.isFalse(existsSync(printed.dir), `${printed.dir} is still there`)
    assert.notMatch(output, /"level":"(WARN|ERROR|FATAL)"/, output)
  })

  it("refuses bad options with a usage error", async () => {
    const child = spawn(process.execPath, [bin, "demo", "--speed", "0"], { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stderr.on("data", (chunk) => output += chunk)
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    assert.strictEqual(code, 2)
    assert.include(output, "--speed must be a number")
  })
})
