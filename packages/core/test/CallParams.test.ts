import { CallParams } from "@botrelay/core"
import { assert, describe, it } from "vitest"

const bytes = (text: string) => new TextEncoder().encode(text)

describe("CallParams", () => {
  it("reads the query string, overridden by a JSON body", () => {
    assert.deepStrictEqual(
      CallParams.parse("?offset=5&timeout=30", bytes(`{"offset":7,"allowed_updates":["message"]}`), "application/json"),
      { offset: 7, timeout: "30", allowed_updates: ["message"] }
    )
    assert.deepStrictEqual(CallParams.parse("", undefined, undefined), {})
    assert.deepStrictEqual(CallParams.parse("?a=1", bytes("not json"), "application/json"), { a: "1" })
    assert.deepStrictEqual(CallParams.parse("", bytes(`[1,2]`), undefined), {})
  })

  it("reads urlencoded bodies as node-telegram-bot-api sends them", () => {
    const form = "chat_id=42&text=h%C3%A9llo+there&allowed_updates=%5B%22message%22%5D"
    const params = CallParams.parse("", bytes(form), "application/x-www-form-urlencoded; charset=utf-8")
    assert.deepStrictEqual(params, { chat_id: "42", text: "héllo there", allowed_updates: "[\"message\"]" })
    assert.strictEqual(CallParams.int(params.chat_id), 42)
    assert.deepStrictEqual(CallParams.array(params.allowed_updates), ["message"])
  })

  it("reads the text fields of a multipart body leniently and skips uploads", () => {
    const boundary = "----b0undary"
    const body = [
      `--${boundary}`,
      `Content-Disposition: form-data; name="url"`,
      "",
      "https://backend.example/hook",
      `--${boundary}`,
      `Content-Disposition: form-data; name="certificate"; filename="cert.pem"`,
      "Content-Type: application/octet-stream",
      "",
      "-----BEGIN CERTIFICATE----- name=\"nope\"",
      `--${boundary}`,
      `content-disposition: form-data; name="secret_token"`,
      "",
      "s3cr3t ✓",
      `--${boundary}--`,
      ""
    ].join("\r\n")
    assert.deepStrictEqual(
      CallParams.parse("?drop_pending_updates=true", bytes(body), `multipart/form-data; boundary="${boundary}"`),
      { drop_pending_updates: "true", url: "https://backend.example/hook", secret_token: "s3cr3t ✓" }
    )
    const cut = body.slice(0, body.indexOf("s3cr3t"))
    assert.deepStrictEqual(CallParams.parse("", bytes(cut), `multipart/form-data; boundary=${boundary}`), {
      url: "https://backend.example/hook"
    })
  })

  it("coerces values as forms and query strings carry them", () => {
    assert.strictEqual(CallParams.int("-100123"), -100123)
    assert.strictEqual(CallParams.int(7), 7)
    assert.isUndefined(CallParams.int("7.5"))
    assert.isUndefined(CallParams.int("@channel"))
    assert.isTrue(CallParams.bool("True"))
    assert.isFalse(CallParams.bool("0"))
    assert.isUndefined(CallParams.bool("maybe"))
    assert.deepStrictEqual(CallParams.object(`{"message_id":3}`), { message_id: 3 })
    assert.isUndefined(CallParams.object("[1]"))
    assert.strictEqual(CallParams.string(12), "12")
  })
})
