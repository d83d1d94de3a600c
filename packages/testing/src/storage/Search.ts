import { BotStore, MessageStore, SearchQuery, SearchStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Either } from "effect"
import { type Runner, botInput, message } from "./Fixtures.js"

type Filters = Omit<SearchStore.MessageSearch, "terms" | "limit" | "bot_ids"> & {
  readonly bot_ids?: ReadonlyArray<number> | undefined
  readonly limit?: number
}

const terms = (q: string): SearchQuery.Terms =>
  Either.getOrElse(SearchQuery.parse(q), (problem) => assert.fail(`${q}: ${problem}`))

/** HTML with its tags removed and its entities decoded: the text a highlight shows. */
const shownText = (html: string) =>
  html.replace(/<\/?mark>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"")
    .replace(/&#39;/g, "'").replace(/&amp;/g, "&")

/** The words a highlight marks. */
const marked = (html: string) => [...html.matchAll(/<mark>(.*?)<\/mark>/g)].map((m) => m[1]!)

/** The conformance tests for full-text search over the message history. */
export const search = (run: Runner): void => {
  const test = run(BotStore.BotStore, MessageStore.MessageStore, SearchStore.SearchStore)
  type Storage = Parameters<Parameters<typeof test>[1]>[0]

  const find = (storage: Storage, q: string, filters: Filters = {}) =>
    storage.searchMessages({ terms: terms(q), bot_ids: undefined, limit: 50, ...filters })

  /** The texts of the messages `q` finds, newest stored first. */
  const texts = (storage: Storage, q: string, filters: Filters = {}) =>
    Effect.map(find(storage, q, filters), (found) => found.map((f) => f.message.text))

  /** Saves one message per text in chat 10 of the bot, ids 1, 2, ... in order. */
  const saveTexts = (storage: Storage, botId: number, ...texts: ReadonlyArray<string>) =>
    Effect.forEach(texts, (text, i) => storage.saveMessage(message(botId, 10, i + 1, { text })), { discard: true })

  describe("search", () => {
    test("words match whatever their case, in Cyrillic and other scripts", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* saveTexts(storage, bot.id, "Привет, мир", "ПРИВЕТ всем", "привет!", "Straße GRÜN", "Ωμέγα ΑΛΦΑ", "hello")
        const all = ["привет!", "ПРИВЕТ всем", "Привет, мир"]
        assert.deepStrictEqual(yield* texts(storage, "привет"), all)
        assert.deepStrictEqual(yield* texts(storage, "Привет"), all)
        assert.deepStrictEqual(yield* texts(storage, "ПРИВЕТ"), all)
        assert.deepStrictEqual(yield* texts(storage, "мир"), ["Привет, мир"])
        assert.deepStrictEqual(yield* texts(storage, "grün"), ["Straße GRÜN"])
        assert.deepStrictEqual(yield* texts(storage, "альфа"), [])
        assert.deepStrictEqual(yield* texts(storage, "αλφα"), ["Ωμέγα ΑΛΦΑ"])
        assert.deepStrictEqual(yield* texts(storage, "HELLO"), ["hello"])
      }))

    test("diacritics do not matter: café matches cafe and CAFÉ", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        yield* saveTexts(storage, bot.id, "Café au lait", "a cafe nearby", "CAFÉ!", "cafeteria", "naïve déjà vu")
        const all = ["CAFÉ!", "a cafe nearby", "Café au lait"]
        assert.deepStrictEqual(yield* texts(storage, "cafe"), all)
        assert.deepStrictEqual(yield* texts(storage, "café"), all)
        assert.deepStrictEqual(yield* texts(storage, "CAFE"), all)
        assert.deepStrictEqual(yield* texts(storage, "naive deja"), ["naïve déjà vu"])
      }))

    test("every word must match, in any order", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        yield* saveTexts(storage, bot.id, "apple banana cherry", "apple only", "banana only", "cherry and apple")
        assert.deepStrictEqual(yield* texts(storage, "apple banana"), ["apple banana cherry"])
        assert.deepStrictEqual(yield* texts(storage, "banana apple"), ["apple banana cherry"])
        assert.deepStrictEqual(yield* texts(storage, "  apple   cherry "), ["cherry and apple", "apple banana cherry"])
        assert.deepStrictEqual(yield* texts(storage, "apple kiwi"), [])
      }))

    test("a phrase matches its words in order, punctuation between them or not", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        yield* saveTexts(storage, bot.id, "good morning team", "morning, good people", "Good, MORNING!", "good sunny morning")
        assert.deepStrictEqual(yield* texts(storage, "\"good morning\""), ["Good, MORNING!", "good morning team"])
        assert.deepStrictEqual(yield* texts(storage, "good morning"), [
          "good sunny morning",
          "Good, MORNING!",
          "morning, good people",
          "good morning team"
        ])
        assert.deepStrictEqual(yield* texts(storage, "\"good morning\" team"), ["good morning team"])
        const [found] = yield* find(storage, "\"morning team\"")
        assert.deepStrictEqual(marked(found!.message.highlight).join(" "), "morning team")
        assert.strictEqual(shownText(found!.message.highlight), "good morning team")
      }))

    test("a trailing * matches words that start with what precedes it", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        yield* saveTexts(storage, bot.id, "delivery today", "we deliver", "delight", "undelivered", "Доставка завтра")
        assert.deepStrictEqual(yield* texts(storage, "deliv*"), ["we deliver", "delivery today"])
        assert.deepStrictEqual(yield* texts(storage, "DELI*"), ["delight", "we deliver", "delivery today"])
        assert.deepStrictEqual(yield* texts(storage, "достав*"), ["Доставка завтра"])
        assert.deepStrictEqual(yield* texts(storage, "deliv"), [])
        assert.deepStrictEqual(yield* texts(storage, "\"we deliv\"*"), ["we deliver"])
        const [found] = yield* find(storage, "deliv* today")
        assert.deepStrictEqual(marked(found!.message.highlight), ["delivery", "today"])
      }))

    test("operators of the engine are searched as text", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        yield* saveTexts(storage, bot.id, "do NOT panic", "cats OR dogs", "x-ray vision", "NEAR(a b) c", "key:value", "cats")
        assert.deepStrictEqual(yield* texts(storage, "NOT"), ["do NOT panic"])
        assert.deepStrictEqual(yield* texts(storage, "cats OR"), ["cats OR dogs"])
        assert.deepStrictEqual(yield* texts(storage, "cats AND dogs"), [])
        assert.deepStrictEqual(yield* texts(storage, "x-ray"), ["x-ray vision"])
        assert.deepStrictEqual(yield* texts(storage, "-ray"), ["x-ray vision"])
        assert.deepStrictEqual(yield* texts(storage, "NEAR(a b)"), ["NEAR(a b) c"])
        assert.deepStrictEqual(yield* texts(storage, "key:value"), ["key:value"])
        assert.deepStrictEqual(yield* texts(storage, "value:key"), [])
        assert.deepStrictEqual(yield* texts(storage, "^cats +dogs"), ["cats OR dogs"])
        assert.deepStrictEqual(yield* texts(storage, "(cats)"), ["cats", "cats OR dogs"])
        assert.deepStrictEqual(yield* texts(storage, "text:cats"), [])
        assert.deepStrictEqual(yield* texts(storage, "scope:cats"), [])
        assert.deepStrictEqual(yield* texts(storage, "*cats*"), ["cats", "cats OR dogs"])
        assert.deepStrictEqual(yield* texts(storage, "ca*ts"), [])
      }))

    test("any query that parses is searched without a failure", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        yield* saveTexts(storage, bot.id, "hello \"quoted\" world 👋 ünïcödé", "b1 c10 u42")
        const nasty = [
          "a\"b\" c", "**a", "a**", "NEAR(a b)", "a:b", "(a", "a)", "^a", "-a", "+a", "a AND", "OR b", "NOT", "{a b}",
          "a*b*", "\"a\"*", "\"*\" a", "\"NEAR(a\"", "'a'", "a\u0000b", "\u0000a", "a\tb\nc", "\"a\u0000\"", "👋a", "ü*",
          "1*", "🙂 hello", "\uE000hello\uE001", "b1", "c10", "u42", "x".repeat(256), "ab ".repeat(85),
          "\"" + "w ".repeat(120) + "\""
        ]
        for (const q of nasty) {
          const parsed = SearchQuery.parse(q)
          assert.isTrue(Either.isRight(parsed), q)
          if (Either.isRight(parsed)) {
            const result = yield* Effect.either(storage.searchMessages({ terms: parsed.right, bot_ids: undefined, limit: 5 }))
            assert.isTrue(Either.isRight(result), `${JSON.stringify(q)}: ${String(Either.isLeft(result) && result.left)}`)
          }
        }
        assert.deepStrictEqual(yield* texts(storage, "🙂 hello"), ["hello \"quoted\" world 👋 ünïcödé"])
        assert.deepStrictEqual(yield* texts(storage, "b1"), ["b1 c10 u42"])
        assert.deepStrictEqual(yield* texts(storage, "u42 c10"), ["b1 c10 u42"])
        assert.deepStrictEqual(yield* texts(storage, "\"quoted\""), ["hello \"quoted\" world 👋 ünïcödé"])
      }))

    test("deleted messages are not found; saving one again undeleted finds it", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        yield* saveTexts(storage, bot.id, "secret plan one", "secret plan two", "secret plan three")
        yield* storage.saveMessage(message(bot.id, 10, 4, { text: "secret plan four", deleted: true }))
        assert.strictEqual(yield* storage.markMessagesDeleted(bot.id, 10, [2]), 1)
        assert.deepStrictEqual(yield* texts(storage, "secret"), ["secret plan three", "secret plan one"])
        assert.deepStrictEqual(yield* texts(storage, "two"), [])
        assert.deepStrictEqual(yield* texts(storage, "four"), [])
        yield* storage.saveMessage(message(bot.id, 10, 4, { text: "secret plan four" }))
        assert.deepStrictEqual(yield* texts(storage, "four"), ["secret plan four"])
      }))

    test("an edited message is found by its new text, not by its old", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        yield* saveTexts(storage, bot.id, "meet at noon", "lunch at noon")
        yield* storage.saveMessage(message(bot.id, 10, 1, { text: "meet at dusk", edit_date: 1_700_000_900 }))
        assert.deepStrictEqual(yield* texts(storage, "noon"), ["lunch at noon"])
        assert.deepStrictEqual(yield* texts(storage, "meet"), ["meet at dusk"])
        const [found] = yield* find(storage, "dusk")
        assert.strictEqual(found!.message.edit_date, 1_700_000_900)
        assert.strictEqual(found!.message.highlight, "meet at <mark>dusk</mark>")
        yield* storage.saveMessage(message(bot.id, 10, 1, { text: "meet at dusk", edit_date: 1_700_000_900 }))
        assert.deepStrictEqual(yield* texts(storage, "dusk"), ["meet at dusk"])
      }))

    test("a found message is the stored message with its highlight", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        const photo = message(bot.id, -1001234567890, 7, {
          text: "caption of a photo",
          media_type: "photo",
          file_id: "AgAC-file",
          reply_to_message_id: 3,
          direction: "out",
          user_id: 7_123_456_789
        })
        yield* storage.saveMessage(photo)
        const found = yield* find(storage, "caption")
        assert.deepStrictEqual(found.map((f) => f.message), [{ ...photo, highlight: "<mark>caption</mark> of a photo" }])
        assert.isTrue(Number.isSafeInteger(found[0]!.position) && found[0]!.position > 0)
      }))

    test("highlights are escaped HTML: the text cannot add markup", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        const script = "<script>alert(\"hi\") & 'bye'</script> hello <mark>x</mark>"
        const forging = "\uE000hello\uE001 world \uE001x\uE000 </mark>"
        yield* saveTexts(storage, bot.id, script, forging)
        const [found] = yield* find(storage, "script")
        assert.strictEqual(
          found!.message.highlight,
          "&lt;<mark>script</mark>&gt;alert(&quot;hi&quot;) &amp; &#39;bye&#39;&lt;/<mark>script</mark>&gt; hello " +
            "&lt;mark&gt;x&lt;/mark&gt;"
        )
        assert.strictEqual(found!.message.text, script)
        const [world] = yield* find(storage, "world")
        assert.strictEqual(
          world!.message.highlight,
          "\uE000hello\uE001 <mark>world</mark> \uE001x\uE000 &lt;/mark&gt;"
        )
        for (const q of ["\uE000hello\uE001", "\uE001x\uE000", "\uE000hello\uE001 world \uE001x\uE000"]) {
          const [found] = yield* find(storage, q)
          const html = found!.message.highlight
          assert.strictEqual(shownText(html), forging, q)
          assert.isAtLeast(marked(html).length, 1, q)
          assert.match(html, /^([^<]|<mark>[^<]*<\/mark>)*$/, q)
        }
      }))

    test("results are only of the bots asked for", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3))
        yield* storage.saveMessage(message(a.id, 10, 1, { text: "status of a" }))
        yield* storage.saveMessage(message(b.id, 10, 1, { text: "status of b" }))
        yield* storage.saveMessage(message(c.id, 10, 1, { text: "status of c" }))
        assert.deepStrictEqual(yield* texts(storage, "status"), ["status of c", "status of b", "status of a"])
        assert.deepStrictEqual(yield* texts(storage, "status", { bot_ids: [a.id] }), ["status of a"])
        assert.deepStrictEqual(yield* texts(storage, "status", { bot_ids: [c.id, a.id] }), ["status of c", "status of a"])
        assert.deepStrictEqual(yield* texts(storage, "status", { bot_ids: [99] }), [])
        assert.deepStrictEqual(yield* texts(storage, "status", { bot_ids: [] }), [])
        assert.deepStrictEqual(yield* texts(storage, "b", { bot_ids: [a.id] }), [])
        yield* storage.deleteBot(b.id)
        assert.deepStrictEqual(yield* texts(storage, "status"), ["status of c", "status of a"])
      }))

    test("chat, sender and date filters; from is inclusive, to exclusive", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const group = -1001234567890
        yield* storage.saveMessage(message(a.id, group, 1, { text: "ping one", user_id: 5, date: 100 }))
        yield* storage.saveMessage(message(a.id, group, 2, { text: "ping two", user_id: 6, date: 200 }))
        yield* storage.saveMessage(message(a.id, 1001234567890, 3, { text: "ping three", user_id: 5, date: 300 }))
        yield* storage.saveMessage(message(a.id, group, 4, { text: "ping four", user_id: -100777, date: 400 }))
        yield* storage.saveMessage(message(b.id, group, 5, { text: "ping five", user_id: 5, date: 500 }))
        assert.deepStrictEqual(yield* texts(storage, "ping", { chat_id: group }), [
          "ping five",
          "ping four",
          "ping two",
          "ping one"
        ])
        assert.deepStrictEqual(yield* texts(storage, "ping", { chat_id: group, bot_ids: [a.id] }), [
          "ping four",
          "ping two",
          "ping one"
        ])
        assert.deepStrictEqual(yield* texts(storage, "ping", { chat_id: -group }), ["ping three"])
        assert.deepStrictEqual(yield* texts(storage, "ping", { user_id: 5 }), ["ping five", "ping three", "ping one"])
        assert.deepStrictEqual(yield* texts(storage, "ping", { user_id: -100777 }), ["ping four"])
        assert.deepStrictEqual(yield* texts(storage, "ping", { user_id: 100777 }), [])
        assert.deepStrictEqual(yield* texts(storage, "ping", { user_id: 5, chat_id: group, bot_ids: [a.id] }), ["ping one"])
        assert.deepStrictEqual(yield* texts(storage, "ping", { from: 200, to: 400 }), ["ping three", "ping two"])
        assert.deepStrictEqual(yield* texts(storage, "ping", { from: 500 }), ["ping five"])
        assert.deepStrictEqual(yield* texts(storage, "ping", { to: 100 }), [])
        assert.deepStrictEqual(yield* texts(storage, "ping", { to: 101 }), ["ping one"])
      }))

    test("newest stored first, whatever the dates; pages by position have no duplicates or gaps", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(bot1)
        for (let id = 1; id <= 60; id++) {
          const text = id % 3 === 0 ? `note ${id}` : `other ${id}`
          yield* storage.saveMessage(message(bot.id, 10 + (id % 4), id, { text, date: 2_000_000_000 - id }))
        }
        const all = yield* find(storage, "note", { limit: 200 })
        assert.deepStrictEqual(all.map((f) => f.message.id), Array.from({ length: 20 }, (_, i) => 60 - 3 * i))
        const positions = all.map((f) => f.position)
        assert.isTrue(positions.every((p, i) => i === 0 || p < positions[i - 1]!))

        const pages: Array<Array<number>> = []
        let before: number | undefined = undefined
        for (;;) {
          const page: ReadonlyArray<SearchStore.Found> = yield* find(storage, "note", { limit: 7, before })
          if (page.length === 0) break
          pages.push(page.map((f) => f.message.id))
          before = page[page.length - 1]!.position
        }
        assert.deepStrictEqual(pages.map((p) => p.length), [7, 7, 6])
        assert.deepStrictEqual(pages.flat(), all.map((f) => f.message.id))

        const first = yield* find(storage, "note", { limit: 5 })
        yield* storage.saveMessage(message(bot.id, 10, 61, { text: "note 61" }))
        yield* storage.saveMessage(message(bot.id, 10 + (57 % 4), 57, { text: "note 57 edited" }))
        const next = yield* find(storage, "note", { limit: 5, before: first[4]!.position })
        assert.deepStrictEqual(next.map((f) => f.message.id), [45, 42, 39, 36, 33])
        const edited = yield* find(storage, "edited")
        assert.strictEqual(edited[0]!.position, all.find((f) => f.message.id === 57)!.position)
      }))
  })
}

const bot1 = botInput(1)
