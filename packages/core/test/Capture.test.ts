import { assert, describe, it } from "@effect/vitest"
import { Capture, Sighting } from "@botrelay/core"

const bot = 7
const botUser = 555
const at = 1_750_000_500

const ann = { id: 42, is_bot: false, first_name: "Ann", last_name: "Lee", username: "ann", language_code: "de" }
const group = { id: -300, type: "group", title: "Team" }
const supergroup = { id: -1_000_000_000_300, type: "supergroup", title: "Team" }
const me = { id: botUser, is_bot: true, first_name: "Relay", username: "relay_bot" }

const captured = (update: Record<string, unknown>) => Capture.captureOf(bot, botUser, { update_id: 1, ...update }, at)
const sightingOf = (update: Record<string, unknown>) => captured(update).sighting

describe("Capture.captureOf", () => {
  it("a message shows its chat and its sender, with their language", () => {
    const result = captured({ message: { message_id: 5, date: 1000, chat: group, from: ann, text: "hi" } })
    assert.deepStrictEqual(result.messages.map((m) => [m.chat_id, m.id, m.text]), [[-300, 5, "hi"]])
    assert.deepStrictEqual(result.sighting, {
      bot_id: bot,
      chats: [{ chat_id: -300, type: "group", title: "Team", username: "", first_name: "", last_name: "", date: 1000 }],
      people: [{
        user_id: 42,
        username: "ann",
        first_name: "Ann",
        last_name: "Lee",
        language_code: "de",
        is_bot: false,
        chat_id: -300,
        date: 1000
      }],
      left: [],
      states: [],
      migrations: [],
      reads: [],
      reopens: [{ chat_id: -300, at }]
    })
  })

  it("new messages and button presses from anyone but the bot reopen their chat; edits and the bot's own do not", () => {
    const reopens = (update: Record<string, unknown>) => sightingOf(update)?.reopens ?? []
    assert.deepStrictEqual(reopens({ message: { message_id: 5, date: 1000, chat: group, from: ann, text: "hi" } }), [
      { chat_id: -300, at }
    ])
    assert.deepStrictEqual(
      reopens({ edited_message: { message_id: 5, date: 1000, edit_date: 1100, chat: group, from: ann, text: "x" } }),
      []
    )
    assert.deepStrictEqual(reopens({ message: { message_id: 6, date: 1000, chat: group, from: me, text: "mine" } }), [])
    assert.deepStrictEqual(
      reopens({ message: { message_id: 7, date: 1000, chat: supergroup, from: ann, migrate_from_chat_id: -300 } }),
      []
    )
    const press = { id: "q1", from: ann, chat_instance: "1", data: "go", message: { message_id: 9, date: 900, chat: group, from: me, text: "menu" } }
    assert.deepStrictEqual(reopens({ callback_query: press }), [{ chat_id: -300, at }])
    assert.deepStrictEqual(
      Sighting.fold([
        { ...Sighting.empty(bot), reopens: [{ chat_id: 1, at: 5 }, { chat_id: 2, at: 5 }] },
        { ...Sighting.empty(bot), reopens: [{ chat_id: 1, at: 9 }] }
      ])[0]!.reopens,
      [{ chat_id: 1, at: 9 }, { chat_id: 2, at: 5 }]
    )
  })

  it("an edit is dated by its edit_date; a renamed chat carries its new title", () => {
    const s = sightingOf({
      edited_message: { message_id: 5, date: 1000, edit_date: 1500, chat: { ...group, title: "Renamed" }, from: ann, text: "x" }
    })!
    assert.deepStrictEqual(s.chats.map((c) => [c.title, c.date]), [["Renamed", 1500]])
    const renamed = sightingOf({
      message: { message_id: 6, date: 1600, chat: { ...group, title: "New" }, from: ann, new_chat_title: "New" }
    })!
    assert.deepStrictEqual(renamed.chats.map((c) => c.title), ["New"])
  })

  it("a private chat carries the user's names; a channel post has no person", () => {
    const s = sightingOf({
      message: { message_id: 1, date: 10, chat: { id: 42, type: "private", first_name: "Ann", username: "ann" }, from: ann, text: "a" }
    })!
    assert.deepStrictEqual(s.chats.map((c) => [c.type, c.first_name, c.username]), [["private", "Ann", "ann"]])
    const post = sightingOf({
      channel_post: { message_id: 1, date: 10, chat: { id: -1_000_000_000_001, type: "channel", title: "News" }, sender_chat: { id: -1_000_000_000_001, type: "channel", title: "News" }, text: "a" }
    })!
    assert.deepStrictEqual(post.chats.map((c) => [c.type, c.title]), [["channel", "News"]])
    assert.deepStrictEqual(post.people, [])
  })

  it("migrations are seen from either side", () => {
    assert.deepStrictEqual(
      sightingOf({ message: { message_id: 9, date: 10, chat: group, from: ann, migrate_to_chat_id: supergroup.id } })!.migrations,
      [{ from_chat_id: -300, to_chat_id: supergroup.id }]
    )
    assert.deepStrictEqual(
      sightingOf({ message: { message_id: 1, date: 10, chat: supergroup, from: ann, migrate_from_chat_id: -300 } })!.migrations,
      [{ from_chat_id: -300, to_chat_id: supergroup.id }]
    )
  })

  it("the bot added, leaving and removed changes its state; it is never a person", () => {
    const added = sightingOf({ message: { message_id: 1, date: 10, chat: group, from: ann, new_chat_members: [me, { ...ann, id: 43 }] } })!
    assert.deepStrictEqual(added.states, [{ chat_id: -300, state: "member", date: 10 }])
    assert.deepStrictEqual(added.people.map((p) => p.user_id), [42, 43])
    const left = sightingOf({ message: { message_id: 2, date: 20, chat: group, from: ann, left_chat_member: me } })!
    assert.deepStrictEqual(left.states, [{ chat_id: -300, state: "left", date: 20 }])
    const gone = sightingOf({ message: { message_id: 3, date: 30, chat: group, from: ann, left_chat_member: { ...ann, id: 44 } } })!
    assert.deepStrictEqual(gone.left, [{ chat_id: -300, user_id: 44, date: 30 }])
    const kicked = sightingOf({
      my_chat_member: {
        chat: group,
        from: ann,
        date: 40,
        old_chat_member: { status: "member", user: me },
        new_chat_member: { status: "kicked", user: me }
      }
    })!
    assert.deepStrictEqual(kicked.states, [{ chat_id: -300, state: "kicked", date: 40 }])
    assert.deepStrictEqual(kicked.people.map((p) => [p.user_id, p.chat_id]), [[42, -300]])
    assert.deepStrictEqual(kicked.chats.map((c) => c.chat_id), [-300])
    const back = sightingOf({
      my_chat_member: {
        chat: group,
        from: ann,
        date: 50,
        old_chat_member: { status: "left", user: me },
        new_chat_member: { status: "administrator", user: me }
      }
    })!
    assert.deepStrictEqual(back.states, [{ chat_id: -300, state: "member", date: 50 }])
  })

  it("chat_member: a user joining is seen in the chat, one leaving is gone from it", () => {
    const bob = { id: 77, is_bot: false, first_name: "Bob" }
    const joined = sightingOf({
      chat_member: {
        chat: group,
        from: ann,
        date: 60,
        old_chat_member: { status: "left", user: bob },
        new_chat_member: { status: "member", user: bob }
      }
    })!
    assert.deepStrictEqual(joined.people.map((p) => [p.user_id, p.chat_id]), [[42, -300], [77, -300]])
    const banned = sightingOf({
      chat_member: {
        chat: group,
        from: ann,
        date: 70,
        old_chat_member: { status: "member", user: bob },
        new_chat_member: { status: "kicked", user: bob }
      }
    })!
    assert.deepStrictEqual(banned.left, [{ chat_id: -300, user_id: 77, date: 70 }])
  })

  it("button presses, inline queries and others without a chat show their user, dated on receipt", () => {
    const press = sightingOf({
      callback_query: { id: "q1", from: ann, chat_instance: "1", data: "go", message: { message_id: 3, date: 5, chat: group } }
    })!
    assert.deepStrictEqual(press.people.map((p) => [p.user_id, p.chat_id, p.date, p.language_code]), [[42, -300, at, "de"]])
    assert.deepStrictEqual(press.chats.map((c) => c.chat_id), [-300])
    const inlinePress = sightingOf({ callback_query: { id: "q2", from: ann, chat_instance: "1", inline_message_id: "x", data: "go" } })!
    assert.deepStrictEqual(inlinePress.chats.map((c) => [c.chat_id, c.type, c.first_name]), [[42, "private", "Ann"]])
    const inline = sightingOf({ inline_query: { id: "i", from: ann, query: "cats", offset: "" } })!
    assert.deepStrictEqual(inline.people.map((p) => [p.user_id, p.chat_id, p.date]), [[42, 0, at]])
    assert.deepStrictEqual(inline.chats, [])
    const answer = sightingOf({ poll_answer: { poll_id: "p", user: ann, option_ids: [0] } })!
    assert.deepStrictEqual(answer.people.map((p) => p.user_id), [42])
    assert.isUndefined(sightingOf({ poll: { id: "p" } }))
    assert.isUndefined(sightingOf({ message: "not a message" }))
  })
})

describe("Sighting.fold", () => {
  const person = (date: number, first_name: string, language_code = "") => ({
    user_id: 42,
    username: "",
    first_name,
    last_name: "",
    language_code,
    is_bot: false,
    chat_id: -1,
    date
  })

  it("keeps each user once: names of the latest, first and last seen over all, a known language", () => {
    const [folded] = Sighting.fold([
      { ...Sighting.empty(1), people: [person(200, "B", "de")] },
      { ...Sighting.empty(1), people: [person(100, "A", "fr")] },
      { ...Sighting.empty(1), people: [person(300, "C")] }
    ])
    assert.deepStrictEqual(folded!.people, [{
      user_id: 42,
      username: "",
      first_name: "C",
      last_name: "",
      language_code: "de",
      is_bot: false,
      first_seen_at: 100,
      last_seen_at: 300
    }])
    assert.deepStrictEqual(folded!.members, [{ chat_id: -1, user_id: 42, date: 300 }])
  })

  it("a departure after the last sighting in a chat wins; one before it does not", () => {
    const [gone] = Sighting.fold([{ ...Sighting.empty(1), people: [person(100, "A")], left: [{ chat_id: -1, user_id: 42, date: 150 }] }])
    assert.deepStrictEqual([gone!.members, gone!.left], [[], [{ chat_id: -1, user_id: 42, date: 150 }]])
    const [back] = Sighting.fold([{ ...Sighting.empty(1), people: [person(200, "A")], left: [{ chat_id: -1, user_id: 42, date: 150 }] }])
    assert.deepStrictEqual([back!.members.length, back!.left.length], [1, 0])
  })

  it("one fold per bot; migrations and read marks in order", () => {
    const folded = Sighting.fold([
      { ...Sighting.empty(1), migrations: [{ from_chat_id: -1, to_chat_id: -2 }] },
      { ...Sighting.empty(2), reads: [{ chat_id: 5, at: 9 }] },
      { ...Sighting.empty(1), migrations: [{ from_chat_id: -3, to_chat_id: -4 }] }
    ])
    assert.deepStrictEqual(folded.map((f) => [f.bot_id, f.migrations.length, f.reads.length]), [[1, 2, 0], [2, 0, 1]])
  })
})
