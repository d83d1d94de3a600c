import type { BotApi } from "@botrelay/telegram"
import { assert, describe, it } from "vitest"
import * as Resend from "../src/runtime/Resend.js"

const message = (fields: Partial<BotApi.Message>): BotApi.Message => ({
  message_id: 7,
  date: 1,
  chat: { id: 42, type: "private" },
  from: { id: 42, is_bot: false, first_name: "Ann", last_name: "Lee", username: "ann" },
  ...fields
})

describe("Resend", () => {
  it("names the sender: name, handle and id; the chat for a channel post", () => {
    assert.strictEqual(Resend.senderOf(message({})), "Ann Lee (@ann, id 42)")
    assert.strictEqual(Resend.senderOf(message({ from: { id: 5, is_bot: false, first_name: "Bo" } })), "Bo (id 5)")
    const { from: _, ...post } = message({ chat: { id: -100, type: "channel", title: "News" } })
    assert.strictEqual(Resend.senderOf(post), "News")
    const header = Resend.headerOf(message({}))
    assert.deepStrictEqual(header, {
      text: "Ann Lee (@ann, id 42):",
      entities: [{ type: "bold", offset: 0, length: 22 }]
    })
  })

  it("puts the header before the content, its entities shifted by the header and the newline", () => {
    const header = { text: "Ann:", entities: [{ type: "bold", offset: 0, length: 4 }] }
    const content = { text: "a <b> & 😀 c", entities: [{ type: "italic", offset: 10, length: 1 }] }
    assert.deepStrictEqual(Resend.prefixed(header, content, 4096), {
      text: "Ann:\na <b> & 😀 c",
      entities: [{ type: "bold", offset: 0, length: 4 }, { type: "italic", offset: 15, length: 1 }]
    })
    assert.deepStrictEqual(Resend.prefixed(header, { text: "", entities: [] }, 4096), header)
  })

  it("leaves the header to a message of its own when both do not fit the limit (UTF-16 code units)", () => {
    const header = { text: "Ann:", entities: [] }
    assert.isUndefined(Resend.prefixed(header, { text: "x".repeat(4092), entities: [] }, 4096))
    assert.isDefined(Resend.prefixed(header, { text: "x".repeat(4091), entities: [] }, 4096))
    assert.isUndefined(Resend.prefixed(header, { text: "😀".repeat(2046), entities: [] }, 4096))
  })

  it("takes text with its entities, media with its caption, and the largest photo", () => {
    const text = message({ text: "hi", entities: [{ type: "bold", offset: 0, length: 2 }] })
    assert.deepStrictEqual(Resend.contentOf(text), {
      _tag: "Text",
      text: { text: "hi", entities: [{ type: "bold", offset: 0, length: 2 }] }
    })
    const photo = message({
      caption: "receipt",
      photo: [
        { file_id: "small", file_unique_id: "s", width: 90, height: 90, file_size: 1000 },
        { file_id: "big", file_unique_id: "b", width: 800, height: 600, file_size: 24000 }
      ]
    })
    assert.deepInclude(Resend.contentOf(photo), {
      _tag: "Media",
      method: "sendPhoto",
      field: "photo",
      file_id: "big",
      file_size: 24000,
      mime_type: "image/jpeg",
      caption: { text: "receipt", entities: [] }
    })
    const document = message({
      document: { file_id: "doc", file_unique_id: "d", file_name: "report.pdf", mime_type: "application/pdf" }
    })
    assert.deepInclude(Resend.contentOf(document), {
      method: "sendDocument",
      file_name: "report.pdf",
      mime_type: "application/pdf"
    })
    const sticker = message({
      sticker: {
        file_id: "st",
        file_unique_id: "st",
        type: "regular",
        width: 512,
        height: 512,
        is_animated: false,
        is_video: false
      }
    })
    assert.deepInclude(Resend.contentOf(sticker), { method: "sendSticker", caption: undefined })
    assert.deepStrictEqual(Resend.contentOf(message({})), { _tag: "Unsupported" })
  })

  it("names an upload after the original file, else after Telegram's file path", () => {
    const content = Resend.contentOf(message({ photo: [{ file_id: "p", file_unique_id: "p", width: 1, height: 1 }] }))
    if (content._tag !== "Media") return assert.fail("a photo is media")
    assert.strictEqual(Resend.fileNameOf(content, "photos/file_3.jpg"), "file_3.jpg")
    assert.strictEqual(Resend.fileNameOf({ ...content, file_name: "me.jpg" }, "photos/file_3.jpg"), "me.jpg")
  })

  it("copies a message's media fields and nothing else", () => {
    const video = { file_id: "v", file_unique_id: "v", width: 1, height: 1, duration: 3 }
    assert.deepStrictEqual(Resend.mediaFields(message({ video, text: "x" })), { video })
    assert.deepStrictEqual(Resend.mediaFields(message({ text: "x" })), {})
  })
})
