import type { Locator } from "playwright-core"
import { afterAll, afterEach, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

const fieldError = async (field: Locator) => {
  await expect.poll(() => field.getAttribute("aria-invalid")).toBe("true")
  const id = (await field.getAttribute("aria-describedby")) ?? ""
  return field.page().locator(`[id="${id}"]`).textContent()
}

describe.skipIf(!hasChromium)("console: Settings", () => {
  let world: ConsoleWorld

  beforeAll(async () => {
    // the environment fixes the timeout (BOTRELAY_LLM_TIMEOUT): the API says so, the console shows it read-only
    world = await startConsole({ server: { flags: { "llm-timeout": "5s" } } })
    await world.signIn()
  })

  afterAll(async () => {
    await world?.close()
  })

  afterEach(() => {
    assert.deepStrictEqual(world.pageErrors, [])
  })

  const llm = async () => {
    const reply = await world.server.call("/api/llm")
    assert.strictEqual(reply.status, 200, reply.text)
    return reply.json
  }

  it("saves the LLM router's base URL, model and API key; after a reload the values show, the key does not", async () => {
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click()
    const baseUrl = page.getByRole("textbox", { name: "Base URL" })
    const model = page.getByRole("textbox", { name: "Model" })
    const apiKey = page.getByLabel("API key", { exact: true })
    await baseUrl.waitFor()
    assert.strictEqual(await apiKey.getAttribute("type"), "password")
    await page.getByText("No key is set").waitFor()

    await baseUrl.fill("https://llm.example.com/v1/")
    await model.fill("gpt-4o-mini")
    await apiKey.fill("sk-test-0123456789abcdef")
    await page.getByRole("button", { name: "Save" }).click()
    await page.getByRole("status").filter({ hasText: "Settings saved." }).waitFor()
    const saved = await llm()
    assert.strictEqual(saved.base_url, "https://llm.example.com/v1")
    assert.strictEqual(saved.model, "gpt-4o-mini")
    assert.strictEqual(saved.api_key, "sk-…cdef")
    assert.isTrue(saved.configured)

    await page.reload()
    await expect.poll(() => baseUrl.inputValue()).toBe("https://llm.example.com/v1")
    assert.strictEqual(await model.inputValue(), "gpt-4o-mini")
    assert.strictEqual(await apiKey.inputValue(), "")
    await page.getByText("A key is set").waitFor()
    const html = await page.content()
    assert.notInclude(html, "0123456789abcdef")
    assert.notInclude(html, saved.api_key)
    await world.screenshot("settings")
  })

  it("a blank API key keeps the stored one; `Clear the stored key` removes it", async () => {
    const page = world.page
    await page.getByRole("textbox", { name: "Model" }).fill("gpt-4.1")
    await page.getByRole("button", { name: "Save" }).click()
    await expect.poll(async () => (await llm()).model).toBe("gpt-4.1")
    assert.strictEqual((await llm()).api_key, "sk-…cdef")

    await page.getByRole("checkbox", { name: "Clear the stored key" }).check()
    await page.getByRole("button", { name: "Save" }).click()
    await expect.poll(async () => (await llm()).api_key).toBe("")
    await page.getByText("No key is set").waitFor()
    await page.getByRole("status").filter({ hasText: "Settings saved." }).waitFor()
  })

  it("shows the API's sentence at the field it refuses, and changes nothing", async () => {
    const page = world.page
    const baseUrl = page.getByRole("textbox", { name: "Base URL" })
    await baseUrl.fill("ftp://nope")
    await page.getByRole("button", { name: "Save" }).click()
    assert.include(await fieldError(baseUrl), "base_url must be an absolute http or https URL")
    assert.strictEqual((await llm()).base_url, "https://llm.example.com/v1")
    assert.strictEqual(await page.getByRole("status").filter({ hasText: "Settings saved." }).count(), 0)
  })

  it("shows a setting the environment fixes read-only with a note, and saves the rest without it", async () => {
    const page = world.page
    const timeout = page.getByRole("spinbutton", { name: "Timeout (ms)" })
    assert.strictEqual(await timeout.inputValue(), "5000")
    assert.strictEqual(await timeout.getAttribute("readonly"), "")
    await page.getByText("Set by the server's environment (BOTRELAY_LLM_").waitFor()
    assert.deepStrictEqual((await llm()).fixed, ["timeout_ms"])

    // the rest still saves, without the fixed field
    await page.getByRole("textbox", { name: "Base URL" }).fill("https://llm.example.com/v1")
    await page.getByRole("textbox", { name: "Model" }).fill("gpt-5-mini")
    await page.getByRole("button", { name: "Save" }).click()
    await page.getByRole("status").filter({ hasText: "Settings saved." }).waitFor()
    assert.strictEqual((await llm()).model, "gpt-5-mini")
  })
})
