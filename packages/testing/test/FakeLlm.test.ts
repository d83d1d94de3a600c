import { assert, describe, it } from "@effect/vitest"
import * as FakeLlm from "../src/FakeLlm.js"

const withFake = async <A>(f: (fake: FakeLlm.FakeLlm) => Promise<A>) => {
  const fake = await FakeLlm.start()
  try {
    return await f(fake)
  } finally {
    await fake.close()
  }
}

const complete = (fake: FakeLlm.FakeLlm, headers: Record<string, string> = {}) =>
  fetch(`${fake.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] })
  })

const content = async (response: Response) => {
  const body = await response.json() as { choices: Array<{ message: { content: string } }> }
  return body.choices[0]!.message.content
}

describe("FakeLlm", () => {
  it("answers scripted choices in order, then the default, and records each request", () =>
    withFake(async (fake) => {
      assert.match(fake.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/)
      fake.choose(3, 5)
      fake.chooseNone()
      const first = await complete(fake, { authorization: "Bearer sk-test" })
      assert.strictEqual(first.status, 200)
      assert.deepStrictEqual(JSON.parse(await content(first)), { route_ids: [3, 5] })
      assert.deepStrictEqual(JSON.parse(await content(await complete(fake))), { route_ids: [] })
      assert.deepStrictEqual(JSON.parse(await content(await complete(fake))), { route_ids: [] })
      fake.setDefault(FakeLlm.choosing(9))
      assert.deepStrictEqual(JSON.parse(await content(await complete(fake))), { route_ids: [9] })
      assert.strictEqual(fake.requests.length, 4)
      assert.strictEqual(fake.requests[0]!.authorization, "Bearer sk-test")
      assert.strictEqual(fake.requests[1]!.authorization, "")
      assert.strictEqual(fake.requests[0]!.path, "/v1/chat/completions")
      assert.strictEqual(fake.requests[0]!.json.model, "m")
    }))

  it("answers raw content, garbage and errors as scripted", () =>
    withFake(async (fake) => {
      fake.answerContent("not json at all")
      fake.answerRaw(500, "{\"error\":{\"message\":\"boom\"}}")
      fake.answerRaw(200, "<html>garbage")
      assert.strictEqual(await content(await complete(fake)), "not json at all")
      const failed = await complete(fake)
      assert.strictEqual(failed.status, 500)
      assert.strictEqual(await failed.text(), "{\"error\":{\"message\":\"boom\"}}")
      assert.strictEqual(await (await complete(fake)).text(), "<html>garbage")
    }))

  it("delays an answer, and waits for requests", () =>
    withFake(async (fake) => {
      fake.answerAfter(300, FakeLlm.choosing(1))
      const started = Date.now()
      const pending = complete(fake)
      const seen = await fake.waitForRequests(1)
      assert.strictEqual(seen.length, 1)
      const answer = await pending
      assert.isAtLeast(Date.now() - started, 250)
      assert.deepStrictEqual(JSON.parse(await content(answer)), { route_ids: [1] })
    }))

  it("answers 404 to other paths and closes with a delayed answer pending", async () => {
    const fake = await FakeLlm.start()
    const other = await fetch(`${fake.baseUrl}/models`)
    assert.strictEqual(other.status, 404)
    fake.answerAfter(10_000)
    const pending = complete(fake).then(() => "answered", () => "failed")
    await fake.waitForRequests(2)
    await fake.close()
    assert.strictEqual(await pending, "failed")
  })
})
