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
    assert.isUndefined(CallParams.int("@channel"))
    assert.isTrue(CallParams.bool("True"))
    assert.isFalse(CallParams.bool("0"))
    assert.isUndefined(CallParams.bool("maybe"))
    assert.deepStrictEqual(CallParams.object(`{"message_id":3}`), { message_id: 3 })
    assert.isUndefined(CallParams.object("[1]"))
    assert.strictEqual(CallParams.string(12), "12")
  })

  it("reads integers as Telegram does: the leading integer of text, JSON numbers truncated", () => {
    const cases: ReadonlyArray<readonly [unknown, number | undefined]> = [
      ["2.5", 2],
      [2.5, 2],
      [-2.5, -2],
      [0.9, 0],
      ["-0", 0],
      ["30", 30],
      [" 30", 30],
      ["10abc", 10],
      ["1e3", 1],
      [1e3, 1000],
      ["-100123", -100123],
      ["abc", undefined],
      ["", undefined],
      ["+5", undefined],
      ["99999999999999999999", undefined],
      [Number.NaN, undefined],
      [Number.POSITIVE_INFINITY, undefined],
      [2 ** 60, undefined],
      [true, undefined],
      [null, undefined],
      [["5"], undefined]
    ]
    for (const [value, expected] of cases) assert.strictEqual(CallParams.int(value), expected, String(value))
  })

  it("reads adversarial multipart bodies in one pass, ending at headers over the limit", () => {
    const boundary = "b"
    const type = `multipart/form-data; boundary=${boundary}`
    const field = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
    const closing = `--${boundary}--\r\n`
    const repeated = [
      "content-disposition:;".repeat(50_000),
      ";name=\"".repeat(50_000),
      "content-disposition: form-data; name=\"".repeat(30_000),
      "x".repeat(200_000),
      "x-a: b\r\n".repeat(2_000),
      `x-long: ${"a".repeat(CallParams.maxPartHeaderBytes)}`
    ]
    for (const headers of repeated) {
      const body = `${field("url", "https://a.example")}--${boundary}\r\n${headers}\r\n\r\nv\r\n${
        field("secret_token", "after")
      }${closing}`
      assert.deepStrictEqual(CallParams.parse("", bytes(body), type), { url: "https://a.example" })
    }
    const manyParts = `--${boundary}\r\nno-end-of-headers\r\n`.repeat(20_000) + closing
    assert.deepStrictEqual(CallParams.parse("", bytes(manyParts), type), {})
    const quoted = `--${boundary}\r\nContent-Disposition: form-data; name="a;b"; x=1\r\n\r\nv\r\n${closing}`
    assert.deepStrictEqual(CallParams.parse("", bytes(quoted), type), { "a;b": "v" })
    const unquoted = `--${boundary}\r\ncontent-disposition : form-data ; NAME=token\r\n\r\nv\r\n${closing}`
    assert.deepStrictEqual(CallParams.parse("", bytes(unquoted), type), { token: "v" })
  })
})
