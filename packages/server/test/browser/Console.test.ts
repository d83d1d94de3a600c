import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

let world: ConsoleWorld

describe.skipIf(!hasChromium)("the console's frame", () => {
  beforeAll(async () => {
    world = await startConsole()
  })
  afterAll(async () => {
    await world?.close()
  })

  it("is served at / with its files cached for good and its pages never", async () => {
    const index = await fetch(`${world.server.baseUrl}/`)
    assert.strictEqual(index.status, 200)
    assert.strictEqual(index.headers.get("cache-control"), "no-cache")
    const html = await index.text()
    assert.include(html, `<base href="/" />`)
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1]
    assert.isString(script)
    const asset = await fetch(`${world.server.baseUrl}/${script}`, { headers: { "accept-encoding": "gzip" } })
    assert.strictEqual(asset.status, 200)
    assert.strictEqual(asset.headers.get("cache-control"), "public, max-age=31536000, immutable")
    assert.match(asset.headers.get("content-type") ?? "", /^text\/javascript/)
    const deep = await fetch(`${world.server.baseUrl}/chats/1/2?message=3`)
    assert.strictEqual(deep.status, 200)
    assert.strictEqual(deep.headers.get("cache-control"), "no-cache")
    assert.strictEqual(await deep.text(), html)
    const again = await fetch(`${world.server.baseUrl}/`, { headers: { "if-none-match": index.headers.get("etag")! } })
    assert.strictEqual(again.status, 304)
    const api = await fetch(`${world.server.baseUrl}/api/nothing-here`)
    assert.strictEqual(api.status, 404)
    assert.strictEqual((await api.json()).code, "not_found")
    const webhook = await fetch(`${world.server.baseUrl}/telegram/nothing`)
    assert.strictEqual(webhook.status, 404)
    assert.notInclude(await webhook.text(), "<html")
  })

  it("sends a signed-out person to sign in, keeping where they were going", async () => {
    const page = world.page
    await page.goto("/bots")
    await page.waitForURL(/\/sign-in\?next=%2Fbots$/)
    assert.strictEqual(await page.getByRole("main").count(), 1)
    await page.getByRole("textbox", { name: "Username" }).fill("nobody")
    await page.getByLabel("Password").fill("wrong password")
    await page.getByRole("button", { name: "Sign in" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("invalid username or password")
    assert.strictEqual(await page.getByLabel("Password").inputValue(), "wrong password")
    await world.signIn()
    await page.goto("/bots")
    await page.getByRole("navigation", { name: "Main" }).waitFor()
    assert.strictEqual(new URL(page.url()).pathname, "/bots")
  })

  it("shows the navigation, one main landmark and the frame's controls after sign-in", async () => {
    const page = world.page
    const nav = page.getByRole("navigation", { name: "Main" })
    const links = await nav.getByRole("link").allTextContents()
    assert.deepStrictEqual(links, ["Chats", "Bots", "Routes", "Deliveries", "Keys", "Accounts", "Audit", "Status", "Settings"])
    assert.strictEqual(await page.getByRole("main").count(), 1)
    await page.getByRole("button", { name: "Sign out" }).waitFor()
    await page.getByRole("combobox", { name: "Language" }).waitFor()
    await nav.getByRole("link", { name: "Chats" }).click()
    await page.waitForURL(/\/chats$/)
    assert.strictEqual(await nav.getByRole("link", { name: "Chats" }).getAttribute("aria-current"), "page")
  })

  it("switches language and theme, and remembers both", async () => {
    const page = world.page
    const theme = page.getByRole("button", { name: "Toggle theme" })
    const dark = (await theme.getAttribute("aria-pressed")) === "true"
    await theme.click()
    assert.strictEqual(await theme.getAttribute("aria-pressed"), String(!dark))
    assert.strictEqual(await page.evaluate(() => document.documentElement.dataset.theme), dark ? "light" : "dark")
    await page.getByRole("combobox", { name: "Language" }).selectOption({ label: "Русский" })
    const nav = page.getByRole("navigation", { name: "Главное" })
    await nav.waitFor()
    assert.includeMembers(await nav.getByRole("link").allTextContents(), ["Чаты", "Боты", "Маршруты"])
    assert.strictEqual(await page.evaluate(() => document.documentElement.lang), "ru")
    await page.reload()
    await page.getByRole("navigation", { name: "Главное" }).waitFor()
    const again = page.getByRole("button", { name: "Сменить тему" })
    assert.strictEqual(await again.getAttribute("aria-pressed"), String(!dark))
    await page.getByRole("combobox", { name: "Язык" }).selectOption({ label: "English" })
    await page.getByRole("navigation", { name: "Main" }).waitFor()
    await page.getByRole("button", { name: "Toggle theme" }).click()
    assert.strictEqual(await page.getByRole("button", { name: "Toggle theme" }).getAttribute("aria-pressed"), String(dark))
  })

  it("works from the keyboard alone: sign in, skip to the content, move through the navigation", async () => {
    const page = await world.newPage()
    await page.waitForURL(/\/sign-in/)
    await page.getByRole("textbox", { name: "Username" }).waitFor()
    assert.strictEqual(await page.evaluate(() => document.activeElement?.getAttribute("name")), "username")
    await page.keyboard.type("admin")
    await page.keyboard.press("Tab")
    await page.keyboard.type("correct horse battery")
    await page.keyboard.press("Enter")
    await page.waitForURL(/\/chats$/)
    await page.keyboard.press("Tab")
    assert.strictEqual(await page.evaluate(() => document.activeElement?.textContent), "Skip to content")
    await page.keyboard.press("Enter")
    assert.strictEqual(await page.evaluate(() => document.activeElement?.id), "main")
    await page.getByRole("link", { name: "Bots" }).focus()
    await page.keyboard.press("Enter")
    await page.waitForURL(/\/bots$/)
    await page.getByRole("table", { name: "Bots" }).waitFor()
  })

  it("keeps the sign-in page and the frame within 360 px", async () => {
    const page = await world.newPage({ width: 360, height: 740 })
    await page.waitForURL(/\/sign-in/)
    await page.getByRole("button", { name: "Sign in" }).waitFor()
    assert.isAtMost(await page.evaluate(() => document.documentElement.scrollWidth), 360)
    await world.signIn({ page })
    await page.getByRole("navigation", { name: "Main" }).waitFor()
    assert.isAtMost(await page.evaluate(() => document.documentElement.scrollWidth), 360)
  })

  it("signs out: the session ends on the server and the page returns to sign-in", async () => {
    const page = world.page
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForURL(/\/sign-in$/)
    await page.getByRole("button", { name: "Sign in" }).waitFor()
    const me = await page.evaluate(async () => (await fetch("api/auth/me")).status)
    assert.strictEqual(me, 401)
    await page.goto("/chats")
    await page.waitForURL(/\/sign-in/)
    assert.deepStrictEqual(world.pageErrors, [])
  })
})
