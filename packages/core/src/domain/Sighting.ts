import type { ChatInfo, ChatState } from "./Chat.js"

/** A chat as an update or a sent message shows it, at `date` (Unix seconds). */
export interface ChatSeen extends ChatInfo {
  readonly chat_id: number
  readonly date: number
}

/** A user an update shows, at `date`, in `chat_id` (0 when the update has no chat, such as an inline query). */
export interface PersonSeen {
  readonly user_id: number
  readonly username: string
  readonly first_name: string
  readonly last_name: string
  /** "" when the update does not say. */
  readonly language_code: string
  readonly is_bot: boolean
  readonly chat_id: number
  readonly date: number
}

/** A user who left a chat or was removed from it. */
export interface MemberLeft {
  readonly chat_id: number
  readonly user_id: number
  readonly date: number
}

/** The bot joined, left or was removed from a chat. */
export interface BotState {
  readonly chat_id: number
  readonly state: ChatState
  readonly date: number
}

/** A group became a supergroup: its history moves from `from_chat_id` to `to_chat_id`. */
export interface ChatMigration {
  readonly from_chat_id: number
  readonly to_chat_id: number
}

/** The chat's read mark moves to `at` (Unix seconds): a reply went out through Botrelay. */
export interface ReadMark {
  readonly chat_id: number
  readonly at: number
}

/** Someone other than the bot wrote or pressed a button in the chat at `at` (Unix seconds): it reopens. */
export interface Reopen {
  readonly chat_id: number
  readonly at: number
}

/**
 * What an update or the messages a bot sent tell about chats and people besides the messages themselves:
 * chats' kinds and names, users and where they were seen, departures, the bot's own membership,
 * migrations to supergroups and read marks.
 */
export interface Sighting {
  readonly bot_id: number
  readonly chats: ReadonlyArray<ChatSeen>
  readonly people: ReadonlyArray<PersonSeen>
  readonly left: ReadonlyArray<MemberLeft>
  readonly states: ReadonlyArray<BotState>
  readonly migrations: ReadonlyArray<ChatMigration>
  readonly reads: ReadonlyArray<ReadMark>
  /** Chats a resolved, pending or snoozed state of is to be reopened; none when omitted. */
  readonly reopens?: ReadonlyArray<Reopen> | undefined
}

/** A user as a batch of sightings shows them: names from the latest, first and last seen over all. */
export interface PersonSeenOver {
  readonly user_id: number
  readonly username: string
  readonly first_name: string
  readonly last_name: string
  readonly language_code: string
  readonly is_bot: boolean
  readonly first_seen_at: number
  readonly last_seen_at: number
}

/** A user last seen in a chat at `date`. */
export interface MemberSeen {
  readonly chat_id: number
  readonly user_id: number
  readonly date: number
}

/**
 * A bot's sightings of a batch folded into one write: each chat, user, membership and bot state once,
 * as the latest sighting shows it (the later one when dates tie); migrations and read marks in order.
 */
export interface Folded {
  readonly bot_id: number
  readonly chats: ReadonlyArray<ChatSeen>
  readonly people: ReadonlyArray<PersonSeenOver>
  readonly members: ReadonlyArray<MemberSeen>
  readonly left: ReadonlyArray<MemberLeft>
  readonly states: ReadonlyArray<BotState>
  readonly migrations: ReadonlyArray<ChatMigration>
  readonly reads: ReadonlyArray<ReadMark>
  /** Each chat to reopen once, at its latest time; after everything else. */
  readonly reopens: ReadonlyArray<Reopen>
}

/** Whether a sighting says nothing. */
export const isEmpty = (s: Sighting): boolean =>
  s.chats.length === 0 && s.people.length === 0 && s.left.length === 0 && s.states.length === 0 &&
  s.migrations.length === 0 && s.reads.length === 0 && (s.reopens === undefined || s.reopens.length === 0)

/** A sighting that says nothing. */
export const empty = (botId: number): Sighting => ({
  bot_id: botId,
  chats: [],
  people: [],
  left: [],
  states: [],
  migrations: [],
  reads: []
})

/** The later of two sightings of the same thing: the one with the greater date, else the second. */
const later = <A extends { readonly date: number }>(a: A | undefined, b: A): A =>
  a === undefined || b.date >= a.date ? b : a

/** Folds sightings, in order, into one write per bot (see `Folded`). */
export const fold = (sightings: ReadonlyArray<Sighting>): ReadonlyArray<Folded> => {
  const byBot = new Map<number, {
    chats: Map<number, ChatSeen>
    people: Map<number, PersonSeenOver & { readonly date: number }>
    membership: Map<string, { readonly chat_id: number; readonly user_id: number; readonly date: number; readonly left: boolean }>
    states: Map<number, BotState>
    migrations: Array<ChatMigration>
    reads: Array<ReadMark>
    reopens: Map<number, Reopen>
  }>()
  for (const s of sightings) {
    let bot = byBot.get(s.bot_id)
    if (bot === undefined) {
      bot = { chats: new Map(), people: new Map(), membership: new Map(), states: new Map(), migrations: [], reads: [], reopens: new Map() }
      byBot.set(s.bot_id, bot)
    }
    for (const chat of s.chats) bot.chats.set(chat.chat_id, later(bot.chats.get(chat.chat_id), chat))
    for (const p of s.people) {
      const known = bot.people.get(p.user_id)
      const latest = known === undefined || p.date >= known.date
      bot.people.set(p.user_id, {
        user_id: p.user_id,
        username: latest ? p.username : known.username,
        first_name: latest ? p.first_name : known.first_name,
        last_name: latest ? p.last_name : known.last_name,
        language_code: latest
          ? p.language_code !== "" ? p.language_code : known?.language_code ?? ""
          : known.language_code !== "" ? known.language_code : p.language_code,
        is_bot: latest ? p.is_bot : known.is_bot,
        first_seen_at: known === undefined ? p.date : Math.min(known.first_seen_at, p.date),
        last_seen_at: known === undefined ? p.date : Math.max(known.last_seen_at, p.date),
        date: latest ? p.date : known.date
      })
      if (p.chat_id !== 0) {
        const key = `${p.chat_id}/${p.user_id}`
        bot.membership.set(key, later(bot.membership.get(key), { chat_id: p.chat_id, user_id: p.user_id, date: p.date, left: false }))
      }
    }
    for (const l of s.left) {
      const key = `${l.chat_id}/${l.user_id}`
      bot.membership.set(key, later(bot.membership.get(key), { ...l, left: true }))
    }
    for (const state of s.states) bot.states.set(state.chat_id, later(bot.states.get(state.chat_id), state))
    bot.migrations.push(...s.migrations)
    bot.reads.push(...s.reads)
    for (const r of s.reopens ?? []) {
      const known = bot.reopens.get(r.chat_id)
      if (known === undefined || r.at > known.at) bot.reopens.set(r.chat_id, r)
    }
  }
  return [...byBot].map(([botId, bot]) => {
    const membership = [...bot.membership.values()]
    return {
      bot_id: botId,
      chats: [...bot.chats.values()],
      people: [...bot.people.values()].map(({ date: _, ...person }) => person),
      members: membership.filter((m) => !m.left).map(({ chat_id, date, user_id }) => ({ chat_id, user_id, date })),
      left: membership.filter((m) => m.left).map(({ chat_id, date, user_id }) => ({ chat_id, user_id, date })),
      states: [...bot.states.values()],
      migrations: bot.migrations,
      reads: bot.reads,
      reopens: [...bot.reopens.values()]
    }
  })
}
