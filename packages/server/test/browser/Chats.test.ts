import { deflateSync } from "node:zlib"
import type { Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

let world: ConsoleWorld
let bot: Awaited<ReturnType<ConsoleWorld["addBot"]>>
let ann: ReturnType<ConsoleWorld["fake"]["addUser"]>

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (bytes: Uint8Array) => {
  let c = 0xffffffff
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** A small PNG (a square of one colour), made here. */
const png = (size: number, rgb: readonly [number, number, number]): Buffer => {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data])
    const out = Buffer.alloc(body.length + 8)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(crc32(body), body.length + 4)
    return out
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header[8] = 8 // bit depth
  header[9] = 2 // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => rgb).flat())])
  const pixels = Buffer.concat(Array.from({ length: size }, () => row))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(pixels)),
    chunk("IEND", Buffer.alloc(0))
  ])
}

const chatList = (page: Page) => page.getByRole("list", { name: "Chats" })
const messages = (page: Page) => page.getByRole("log", { name: "Messages" })
const people = (page: Page) => page.getByRole("complementary", { name: "People" })

/** The open chat's article of a message with this text. */
const article = (page: Page, text: string) => messages(page).getByRole("article").filter({ hasText: text })

/** The open chat's article of a message with this text that was sent (not one Telegram refused). */
const sentArticle = (page: Page, text: string) =>
  article(page, text).filter({ has: page.getByRole("img", { name: "Sent", exact: true }) })

/** Live updates must show within 1 s; a little more for a loaded machine. */
const live = { timeout: 3000 }

describe.skipIf(!hasChromium)("the chats", () => {
  beforeAll(async () => {
    world = await startConsole()
    bot = await world.addBot({ name: "Support" }, { username: "support_bot" })
    await world.fake.waitForPoll(bot.tg.id, "10 seconds")
    ann = world.fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann_lee" })
    await world.signIn()
  })
  afterAll(async () => {
    await world?.close()
  })

  it("lists a new chat live with its unread count, and opening it reads it", async () => {
    const page = world.page
    const list = chatList(page)
    await list.waitFor()
    assert.strictEqual(await list.getByRole("listitem").count(), 0)
    world.fake.userSends(bot.tg.id, { user: ann, text: "Where is my order?" })
    world.fake.userSends(bot.tg.id, { user: ann, text: "Hello?" })
    const item = list.getByRole("listitem").filter({ has: page.getByRole("link", { name: "Ann Lee · Support" }) })
    await item.getByLabel("2 unread").waitFor(live)
    assert.strictEqual(await item.getByRole("link").count(), 1)
    assert.strictEqual(await item.getByLabel("2 unread").textContent(), "2")

    await item.getByRole("link").click()
    await page.waitForURL(new RegExp(`/chats/${bot.id}/${ann.id}$`))
    await article(page, "Where is my order?").waitFor()
    assert.match((await article(page, "Hello?").getAttribute("aria-label")) ?? "", /^Ann Lee, /)
    await expect.poll(() => item.getByLabel(/unread/).count()).toBe(0)
    const chat = await world.server.call(`/api/chats/get?bot_id=${bot.id}&chat_id=${ann.id}`)
    assert.strictEqual(chat.json.unread_count, 0)

    // the open chat takes new messages live, and they are read as they come
    world.fake.userSends(bot.tg.id, { user: ann, text: "Anyone there?" })
    await article(page, "Anyone there?").waitFor(live)
    const texts = await messages(page).getByRole("article").allTextContents()
    assert.include(texts.at(-1), "Anyone there?", "the newest is at the bottom")
    await expect.poll(async () =>
      (await world.server.call(`/api/chats/get?bot_id=${bot.id}&chat_id=${ann.id}`)).json.unread_count
    ).toBe(0)
    assert.strictEqual(await item.getByLabel(/unread/).count(), 0)
  })

  it("replies with Reply, the Message box and Enter", async () => {
    const page = world.page
    const question = article(page, "Where is my order?")
    await question.getByRole("button", { name: "Reply" }).click()
    const target = page.getByRole("region", { name: "Replying to" })
    await target.waitFor()
    assert.include(await target.textContent(), "Where is my order?")
    const box = page.getByRole("textbox", { name: "Message" })
    await box.fill("It left the warehouse")
    await box.press("Shift+Enter")
    await box.pressSequentially("this morning")
    await box.press("Enter")
    const sent = await world.fake.waitForSent((s) => s.message.text === "It left the warehouse\nthis morning")
    const asked = world.fake.sent().find((s) => s.message.text === "Where is my order?")
    const call = await world.fake.waitForCall((c) => c.method === "sendMessage" && c.params.text === sent.message.text)
    const replyTo = call.params.reply_to_message_id ?? (call.params.reply_parameters as any)?.message_id
    assert.strictEqual(Number(replyTo), sent.message.reply_to_message?.message_id)
    assert.isUndefined(asked, "the question came from the user, not the bot")
    await article(page, "this morning").waitFor(live)
    await target.waitFor({ state: "detached" }) // the reply target goes once sent
    await expect.poll(() => box.inputValue()).toBe("")
    const stored = await world.server.call(`/api/messages?bot_id=${bot.id}&chat_id=${ann.id}`)
    const reply = stored.json.find((m: any) => m.text === "It left the warehouse\nthis morning")
    const original = stored.json.find((m: any) => m.text === "Where is my order?")
    assert.strictEqual(reply.reply_to_message_id, original.id)
  })

  it("sends a photo through Attach file with the text as its caption, and shows it inline", async () => {
    const page = world.page
    await page.getByRole("button", { name: "Attach file" }).waitFor()
    await page.locator('input[type="file"]').setInputFiles({
      name: "parcel.png",
      mimeType: "image/png",
      buffer: png(96, [200, 60, 30])
    })
    const remove = page.getByRole("button", { name: "Remove attachment" })
    await remove.waitFor()
    await page.getByRole("textbox", { name: "Message" }).fill("Your parcel")
    await page.getByRole("button", { name: "Send", exact: true }).click()
    const sent = await world.fake.waitForSent((s) => s.method === "sendPhoto")
    assert.strictEqual(sent.message.caption, "Your parcel")
    assert.strictEqual(sent.upload?.field, "photo")
    const image = article(page, "Your parcel").getByRole("img", { name: "Your parcel" })
    await image.waitFor(live)
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(96)
    assert.strictEqual(await remove.count(), 0)
  })

  it("shows a send's error beside the composer", async () => {
    const page = world.page
    world.fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" })
    const box = page.getByRole("textbox", { name: "Message" })
    await box.fill("Are you still there?")
    await box.press("Enter")
    const alert = page.locator(".composer").getByRole("alert")
    await alert.waitFor()
    assert.include(await alert.textContent(), "bot was blocked by the user")
    assert.isTrue(await box.evaluate((b) => b.closest("form")?.contains(document.querySelector(".composer [role=alert]")) === true))
    assert.strictEqual(await box.inputValue(), "Are you still there?", "the text stays to send again")
    // the refused one stays in the history, marked failed
    await article(page, "Are you still there?")
      .getByRole("img", { name: "Failed: Forbidden: bot was blocked by the user" }).waitFor(live)
    await page.getByRole("button", { name: "Send", exact: true }).click()
    await sentArticle(page, "Are you still there?").waitFor(live)
    assert.strictEqual(await alert.count(), 0)
  })

  it("edits, pins and unpins the bot's own message", async () => {
    const page = world.page
    const own = sentArticle(page, "Are you still there?")
    await own.getByRole("button", { name: "Edit", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Edit message" })
    await dialog.getByRole("textbox", { name: "Text" }).fill("Are you still there? We can call you.")
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    const edited = await world.fake.waitForCall((c) => c.method === "editMessageText")
    assert.strictEqual(edited.params.text, "Are you still there? We can call you.")
    const now = article(page, "We can call you.")
    await now.getByText("edited", { exact: true }).waitFor()

    await now.getByRole("button", { name: "Pin", exact: true }).click()
    await now.getByRole("button", { name: "Unpin", exact: true }).waitFor()
    const pinnedId = Number(edited.params.message_id)
    assert.deepStrictEqual(world.fake.pinnedMessages(bot.tg.id, ann.id), [pinnedId])
    await now.getByRole("button", { name: "Unpin", exact: true }).click()
    await now.getByRole("button", { name: "Pin", exact: true }).waitFor()
    assert.deepStrictEqual(world.fake.pinnedMessages(bot.tg.id, ann.id), [])
    // an incoming private message has Reply only
    const incoming = messages(page).getByRole("article", { name: /^Ann Lee, / }).filter({ hasText: "Where is my order?" })
    assert.deepStrictEqual(await incoming.getByRole("button").allTextContents(), ["Reply"])
  })

  it("tags the private chat's person in People", async () => {
    const page = world.page
    const panel = people(page)
    await panel.getByRole("heading", { name: "Ann Lee" }).waitFor()
    assert.include(await panel.textContent(), "@ann_lee")
    await panel.getByRole("textbox", { name: "Tag" }).fill("vip")
    await panel.getByRole("button", { name: "Add tag" }).click()
    await panel.getByRole("button", { name: "Remove tag vip" }).waitFor()
    await panel.getByRole("textbox", { name: "Tag" }).fill("late delivery")
    await panel.getByRole("textbox", { name: "Tag" }).press("Enter")
    await panel.getByRole("button", { name: "Remove tag late delivery" }).waitFor()
    const tags = await world.server.call(`/api/tags?bot_id=${bot.id}&chat_id=${ann.id}&user_id=${ann.id}`)
    assert.deepStrictEqual(tags.json.map((t: any) => t.tag), ["vip", "late delivery"])
    await panel.getByRole("button", { name: "Remove tag late delivery" }).click()
    await expect.poll(async () =>
      (await world.server.call(`/api/tags?bot_id=${bot.id}&chat_id=${ann.id}`)).json.map((t: any) => t.tag)
    ).toEqual(["vip"])
    const person = await world.server.call(`/api/people/get?user_id=${ann.id}`)
    assert.deepStrictEqual(person.json.tags.map((t: any) => t.tag), ["vip"])
    await world.screenshot("chats")
  })

  it("bans a group member from their message, after an alertdialog", async () => {
    const page = world.page
    const owner = world.fake.addUser({ first_name: "Olga" })
    const max = world.fake.addUser({ first_name: "Max", last_name: "Mustermann", username: "max" })
    const group = world.fake.addGroup({ type: "supergroup", title: "Buyers", creator: owner.id })
    world.fake.addMember(group.id, max.id)
    world.fake.setRights(group.id, bot.tg.id, { can_restrict_members: true, can_delete_messages: true, can_pin_messages: true })
    const posted = world.fake.userSends(bot.tg.id, { chat: group, user: max, text: "Cheap watches here" })
    await chatList(page).getByRole("link", { name: "Buyers · Support" }).click()
    const spam = article(page, "Cheap watches here")
    await spam.waitFor()
    for (const name of ["Reply", "Delete", "Pin", "Ban"]) {
      await spam.getByRole("button", { name, exact: true }).waitFor()
    }
    assert.strictEqual(await spam.getByRole("button", { name: "Edit", exact: true }).count(), 0)

    // the sender's name shows them in People, with the group's moderation
    await spam.getByRole("button", { name: "Max Mustermann" }).click()
    const panel = people(page)
    await panel.getByRole("heading", { name: "Max Mustermann" }).waitFor()
    for (const name of ["Unban", "Restrict", "Promote"]) await panel.getByRole("button", { name, exact: true }).waitFor()

    // Cancel leaves them be
    await spam.getByRole("button", { name: "Ban", exact: true }).click()
    const dialog = page.getByRole("alertdialog", { name: "Ban" })
    await dialog.waitFor()
    await dialog.getByRole("button", { name: "Cancel" }).click()
    await dialog.waitFor({ state: "hidden" })
    assert.strictEqual(world.fake.chatMember(group.id, max.id, bot.tg.id).status, "member")

    await spam.getByRole("button", { name: "Ban", exact: true }).click()
    await dialog.getByRole("button", { name: "Ban", exact: true }).click()
    await dialog.waitFor({ state: "hidden" })
    await expect.poll(() => world.fake.chatMember(group.id, max.id, bot.tg.id).status).toBe("kicked")
    await page.getByRole("status").filter({ hasText: "Max Mustermann was banned." }).waitFor()
    const audit = await world.server.call("/api/audit?action=chats.ban")
    assert.strictEqual(audit.json.items[0]?.outcome, "ok")

    // Delete, confirmed, deletes at Telegram and marks the message
    await spam.getByRole("button", { name: "Delete", exact: true }).click()
    const deleting = page.getByRole("alertdialog", { name: "Delete" })
    await deleting.getByRole("button", { name: "Delete", exact: true }).click()
    await deleting.waitFor({ state: "hidden" })
    assert.isFalse(world.fake.hasMessage(bot.tg.id, group.id, posted.message_id))
    await expect.poll(async () => {
      const history = await world.server.call(`/api/messages?bot_id=${bot.id}&chat_id=${group.id}`)
      return history.json.find((m: any) => m.text === "Cheap watches here")?.deleted
    }).toBe(true)
    await spam.getByText("deleted", { exact: true }).waitFor()
    assert.strictEqual(await spam.getByRole("button", { name: "Delete", exact: true }).count(), 0)
  })

  it("restricts and promotes a group member from People", async () => {
    const page = world.page
    const lea = world.fake.addUser({ first_name: "Lea", last_name: "Stone" })
    const group = world.fake.addGroup({ type: "supergroup", title: "Sellers" })
    world.fake.addMember(group.id, lea.id)
    world.fake.setRights(group.id, bot.tg.id, {
      can_manage_chat: true,
      can_restrict_members: true,
      can_promote_members: true,
      can_delete_messages: true
    })
    world.fake.userSends(bot.tg.id, { chat: group, user: lea, text: "Selling my bike" })
    await chatList(page).getByRole("link", { name: "Sellers · Support" }).click()
    await article(page, "Selling my bike").getByRole("button", { name: "Lea Stone" }).click()
    const panel = people(page)
    await panel.getByRole("heading", { name: "Lea Stone" }).waitFor()

    await panel.getByRole("button", { name: "Restrict", exact: true }).click()
    const restrict = page.getByRole("dialog", { name: "Restrict" })
    await restrict.getByRole("checkbox", { name: "Send messages" }).uncheck()
    await restrict.getByRole("button", { name: "Restrict", exact: true }).click()
    await restrict.waitFor({ state: "hidden" })
    await expect.poll(() => world.fake.chatMember(group.id, lea.id, bot.tg.id).status).toBe("restricted")
    assert.isFalse(world.fake.chatMember(group.id, lea.id, bot.tg.id).can_send_messages)
    await page.getByRole("status").filter({ hasText: "Lea Stone was restricted." }).waitFor()

    await panel.getByRole("button", { name: "Promote", exact: true }).click()
    const promote = page.getByRole("dialog", { name: "Promote" })
    for (const right of await promote.getByRole("checkbox").all()) await right.uncheck()
    await promote.getByRole("checkbox", { name: "Delete messages" }).check()
    await promote.getByRole("button", { name: "Promote", exact: true }).click()
    await promote.waitFor({ state: "hidden" })
    await expect.poll(() => world.fake.chatMember(group.id, lea.id, bot.tg.id).status).toBe("administrator")
    assert.isTrue(world.fake.chatMember(group.id, lea.id, bot.tg.id).can_delete_messages)
    const audit = await world.server.call("/api/audit?action=chats.promote")
    assert.strictEqual(audit.json.items[0]?.outcome, "ok")
  })

  it("finds messages across chats and opens the chat at one", async () => {
    const page = world.page
    const search = page.getByRole("searchbox", { name: "Search messages" })
    await search.fill("warehouse")
    const results = page.getByRole("list", { name: "Search results" })
    const found = results.getByRole("link").filter({ hasText: "It left the warehouse" })
    await found.waitFor()
    await found.click()
    await page.waitForURL(new RegExp(`/chats/${bot.id}/${ann.id}\\?message=\\d+$`))
    const shown = article(page, "It left the warehouse")
    await shown.waitFor()
    await expect.poll(() => shown.evaluate((a) => a === document.activeElement)).toBe(true)
    assert.isTrue(await shown.isVisible())
    await search.fill("")
  })

  it("filters the chat list with Search chats", async () => {
    const page = world.page
    const list = chatList(page)
    await list.getByRole("link", { name: "Buyers · Support" }).waitFor()
    await page.getByRole("searchbox", { name: "Search chats" }).fill("ann")
    await expect.poll(() => list.getByRole("link").allTextContents()).toEqual(["Ann Lee · Support"])
    await page.getByRole("searchbox", { name: "Search chats" }).fill("")
    await expect.poll(() => list.getByRole("link").count()).toBe(3)
  })

  it("works at 360 px: the list, then the chat with a way back", async () => {
    const mobile = await world.newPage({ width: 360, height: 740 })
    await world.signIn({ page: mobile })
    const list = chatList(mobile)
    await list.getByRole("link", { name: "Ann Lee · Support" }).click()
    const box = mobile.getByRole("textbox", { name: "Message" })
    await box.waitFor()
    assert.isTrue(await box.isVisible())
    assert.isTrue(await messages(mobile).isVisible())
    assert.strictEqual(await list.count(), 0, "one column at a time")
    const fits = () => mobile.evaluate(() => document.documentElement.scrollWidth)
    assert.isAtMost(await fits(), 360)
    const boxRight = await box.evaluate((b) => b.getBoundingClientRect().right)
    assert.isAtMost(boxRight, 360)
    const send = mobile.getByRole("button", { name: "Send", exact: true })
    assert.isAtMost(await send.evaluate((b) => b.getBoundingClientRect().right), 360)
    await box.fill("Sent from a phone")
    await box.press("Enter")
    await article(mobile, "Sent from a phone").waitFor(live)
    await world.screenshot("chat-mobile", mobile)
    // People opens on demand
    await mobile.getByRole("button", { name: "Show person" }).click()
    await people(mobile).getByRole("heading", { name: "Ann Lee" }).waitFor()
    await people(mobile).getByRole("button", { name: "Close" }).click()
    await people(mobile).waitFor({ state: "hidden" })
    assert.isTrue(await mobile.getByRole("button", { name: "Show person" }).evaluate((b) => b === document.activeElement))
    await mobile.getByRole("link", { name: "Back to chats" }).click()
    await list.waitFor()
    assert.isAtMost(await fits(), 360)
    assert.deepStrictEqual(world.pageErrors, [])
  })

  it("speaks Russian", async () => {
    const page = world.page
    await page.goto(`/chats/${bot.id}/${ann.id}`)
    await page.getByRole("combobox", { name: "Language" }).selectOption({ label: "Русский" })
    await page.getByRole("list", { name: "Чаты" }).waitFor()
    await page.getByRole("searchbox", { name: "Поиск чатов" }).waitFor()
    await page.getByRole("searchbox", { name: "Поиск сообщений" }).waitFor()
    await page.getByRole("log", { name: "Сообщения" }).waitFor()
    await page.getByRole("textbox", { name: "Сообщение" }).waitFor()
    await page.getByRole("button", { name: "Отправить" }).waitFor()
    await page.getByRole("button", { name: "Прикрепить файл" }).waitFor()
    await page.getByRole("complementary", { name: "Люди" }).getByRole("button", { name: "Добавить метку" }).waitFor()
    await page.getByRole("combobox", { name: "Язык" }).selectOption({ label: "English" })
    await chatList(page).waitFor()
    assert.deepStrictEqual(world.pageErrors, [])
  })

  it("shows operators their bots' chats only", async () => {
    const sales = await world.addBot({ name: "Sales" }, { username: "sales_bot" })
    await world.fake.waitForPoll(sales.tg.id, "10 seconds")
    const bob = world.fake.addUser({ first_name: "Bob", last_name: "Stone" })
    world.fake.userSends(sales.tg.id, { user: bob, text: "Do you ship abroad?" })
    const operator = await world.newPage()
    await world.signIn({ page: operator, username: "op", role: "operator", bot_ids: [sales.id] })
    const list = chatList(operator)
    await list.getByRole("link", { name: "Bob Stone · Sales" }).click()
    await article(operator, "Do you ship abroad?").waitFor()
    assert.deepStrictEqual(await list.getByRole("link").allTextContents(), ["Bob Stone · Sales"])
    const box = operator.getByRole("textbox", { name: "Message" })
    await box.fill("We do")
    await box.press("Enter")
    await world.fake.waitForSent((sent) => sent.botId === sales.tg.id && sent.message.text === "We do")
    // a chat of a bot outside the scope is not theirs to open
    await operator.goto(`/chats/${bot.id}/${ann.id}`)
    await operator.getByRole("alert").waitFor()
    assert.strictEqual(await messages(operator).getByRole("article").count(), 0)
    assert.deepStrictEqual(world.pageErrors, [])
  })

  it("keeps a long list virtual, loads it a page at a time and moves a chat with news to the top", async () => {
    const page = world.page
    await page.goto("/chats")
    const list = chatList(page)
    await list.getByRole("link").first().waitFor()
    const many = await world.addBot({ name: "Many" }, { username: "many_bot" })
    await world.fake.waitForPoll(many.tg.id, "10 seconds")
    const count = 130
    for (let i = 0; i < count; i++) {
      world.clock += 1
      const person = world.fake.addUser({ first_name: "Person", last_name: String(i).padStart(3, "0") })
      world.fake.userSends(many.tg.id, { user: person, text: `hello ${i}` })
    }
    await list.getByRole("link", { name: `Person ${String(count - 1).padStart(3, "0")} · Many` }).waitFor({ timeout: 10_000 })
    await expect.poll(async () =>
      (await world.server.call(`/api/chats?bot_id=${many.id}&limit=200`)).json.items.length, { timeout: 10_000 }
    ).toBe(count)
    // a fresh load: the first page of 100, only the rows in view in the page
    await page.reload()
    await list.getByRole("link").first().waitFor()
    assert.isAtMost(await list.getByRole("listitem").count(), 40)
    const scroller = page.locator(".chat-list-scroll")
    const oldest = list.getByRole("link", { name: "Person 000 · Many" })
    for (let i = 0; i < 20 && (await oldest.count()) === 0; i++) {
      await scroller.evaluate((el) => el.scrollTo({ top: el.scrollHeight }))
      await page.waitForTimeout(100)
    }
    await oldest.waitFor()
    assert.isAtMost(await list.getByRole("listitem").count(), 40)
    // Ann writes: her chat goes to the top, with its count
    world.clock += 10
    world.fake.userSends(bot.tg.id, { user: ann, text: "One more thing" })
    await scroller.evaluate((el) => el.scrollTo({ top: 0 }))
    const first = list.getByRole("listitem").first()
    await first.getByRole("link", { name: "Ann Lee · Support" }).waitFor(live)
    await first.getByLabel("1 unread").waitFor()
    assert.deepStrictEqual(world.pageErrors, [])
  })

  it("opens a long chat at its newest message, loads older ones on scrolling up, and finds an old one", async () => {
    const page = world.page
    const talker = world.fake.addUser({ first_name: "Tess", last_name: "Talker" })
    for (let i = 0; i < 120; i++) {
      world.clock += 1
      world.fake.userSends(bot.tg.id, { user: talker, text: `line number ${i}` })
    }
    await expect.poll(async () =>
      (await world.server.call(`/api/chats/get?bot_id=${bot.id}&chat_id=${talker.id}`)).json.message_count, { timeout: 10_000 }
    ).toBe(120)
    await page.goto(`/chats/${bot.id}/${talker.id}`)
    const newest = article(page, "line number 119")
    await newest.waitFor()
    assert.isTrue(await newest.isVisible())
    const inView = await newest.evaluate((a) => {
      const box = a.getBoundingClientRect()
      const log = a.closest(".message-scroll")!.getBoundingClientRect()
      return box.bottom <= log.bottom + 1 && box.top >= log.top - 1
    })
    assert.isTrue(inView, "the newest message shows at the bottom")
    const first = article(page, "line number 0")
    assert.strictEqual(await first.count(), 0)
    const scroller = page.locator(".message-scroll")
    for (let i = 0; i < 20 && (await first.count()) === 0; i++) {
      await scroller.evaluate((el) => el.scrollBy({ top: -100_000 }))
      await page.waitForTimeout(100)
    }
    await first.waitFor()
    assert.strictEqual(await messages(page).getByRole("article").count(), 120)

    // a search result deep in another chat's history opens it there
    await page.goto("/chats")
    await page.getByRole("searchbox", { name: "Search messages" }).fill("\"line number 3\"")
    await page.getByRole("searchbox", { name: "Search messages" }).press("Enter")
    const result = page.getByRole("list", { name: "Search results" }).getByRole("link").filter({ hasText: /line number 3$/ })
    await result.click()
    const found = messages(page).getByRole("article").filter({ hasText: /line number 3(?!\d)/ })
    await expect.poll(() => found.evaluate((a) => a === document.activeElement)).toBe(true)
    assert.isTrue(await found.isVisible())
  })
})
