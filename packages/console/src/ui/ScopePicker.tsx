import { useId, useState } from "react"
import type { Schemas } from "../api/client"
import { defineTexts } from "../i18n"
import { useBots } from "./bots"

/** One entry of an operator's scope: a bot, some of its chats (none: all), what may be done there. */
export type ScopeEntry = Schemas["ScopeEntry"]
type Ability = ScopeEntry["abilities"][number]

const abilities: ReadonlyArray<Ability> = ["read", "reply", "moderate", "configure"]
const defaultAbilities: ReadonlyArray<Ability> = ["read", "reply", "moderate"]

const useTexts = defineTexts({
  bots: "Bots",
  noBots: "There are no bots yet.",
  adminsSeeAll: "Admins act on every bot.",
  operatorScope: "The bots this operator may use, and in each its chats and what it may do; none chosen means none.",
  unknownBot: (id: number) => `bot ${id}`,
  chats: (bot: string) => `Chats of ${bot}`,
  chatsHint: "Chat ids separated by commas; empty means every chat.",
  chatsInvalid: "Write chat ids (whole numbers) separated by commas.",
  abilities: (bot: string) => `Abilities in ${bot}`,
  read: "Read",
  reply: "Reply",
  moderate: "Moderate",
  configure: "Configure"
}, {
  bots: "Боты",
  noBots: "Ботов пока нет.",
  adminsSeeAll: "Администраторы работают со всеми ботами.",
  operatorScope: "Боты, с которыми может работать оператор, а в каждом — чаты и что разрешено; если не выбран ни один — ни с какими.",
  unknownBot: (id: number) => `бот ${id}`,
  chats: (bot: string) => `Чаты ${bot}`,
  chatsHint: "Номера чатов через запятую; пусто — все чаты.",
  chatsInvalid: "Укажите номера чатов (целые числа) через запятую.",
  abilities: (bot: string) => `Права в ${bot}`,
  read: "Чтение",
  reply: "Ответы",
  moderate: "Модерация",
  configure: "Настройка"
})

/** Chat ids from text: whole numbers separated by commas or spaces; `undefined` when any part is not one. */
const parseChatIds = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(/[\s,]+/).filter((p) => p !== "")
  const ids = parts.map(Number)
  return ids.every((id) => Number.isSafeInteger(id) && id !== 0) ? ids : undefined
}

/** One bot's chats and abilities, shown once the bot is chosen. */
const EntryFields = ({ entry, name, onChange }: {
  readonly entry: ScopeEntry
  readonly name: string
  readonly onChange: (entry: ScopeEntry) => void
}) => {
  const texts = useTexts()
  const id = useId()
  const [text, setText] = useState(entry.chat_ids.join(", "))
  const ids = parseChatIds(text)
  return (
    <div className="scope-entry">
      <div className="field">
        <label htmlFor={`${id}-chats`}>{texts.chats(name)}</label>
        <input
          id={`${id}-chats`}
          value={text}
          inputMode="numeric"
          autoComplete="off"
          aria-describedby={`${id}-chats-hint` + (ids === undefined ? ` ${id}-chats-error` : "")}
          aria-invalid={ids === undefined ? true : undefined}
          onChange={(e) => {
            setText(e.target.value)
            const parsed = parseChatIds(e.target.value)
            if (parsed !== undefined) onChange({ ...entry, chat_ids: [...parsed] })
          }}
        />
        <p id={`${id}-chats-hint`} className="field-hint">{texts.chatsHint}</p>
        {ids === undefined ? <p id={`${id}-chats-error`} className="field-error">{texts.chatsInvalid}</p> : null}
      </div>
      <fieldset className="scope-abilities">
        <legend>{texts.abilities(name)}</legend>
        {abilities.map((ability) => (
          <label key={ability}>
            <input
              type="checkbox"
              checked={entry.abilities.includes(ability)}
              onChange={(e) =>
                onChange({
                  ...entry,
                  abilities: abilities.filter((a) => a === ability ? e.target.checked : entry.abilities.includes(a))
                })}
            />
            {texts[ability]}
          </label>
        ))}
      </fieldset>
    </div>
  )
}

/**
 * `Bots`: a fieldset with a checkbox per bot (named by the bot's name) for an operator's scope; a chosen bot
 * shows `Chats of <bot>` (chat ids, empty: every chat) and `Abilities in <bot>` (Read, Reply, Moderate,
 * Configure). Disabled when `role` is admin. `error` is the API's sentence about `scopes` or `bot_ids`.
 */
export const ScopePicker = ({ role, value, onChange, error }: {
  readonly role: "admin" | "operator"
  readonly value: ReadonlyArray<ScopeEntry>
  readonly onChange: (entries: ReadonlyArray<ScopeEntry>) => void
  readonly error?: string | undefined
}) => {
  const texts = useTexts()
  const bots = useBots()
  const id = useId()
  const admin = role === "admin"
  const list = bots.data ?? []
  return (
    <fieldset
      className="field bot-picker"
      disabled={admin}
      aria-describedby={`${id}-hint` + (error === undefined ? "" : ` ${id}-error`)}
      aria-invalid={error === undefined ? undefined : true}
    >
      <legend>{texts.bots}</legend>
      <p id={`${id}-hint`} className="field-hint">{admin ? texts.adminsSeeAll : texts.operatorScope}</p>
      {list.length === 0 && bots.isSuccess ? <p className="muted">{texts.noBots}</p> : null}
      <ul className="bot-picker-list">
        {list.map((bot) => {
          const name = bot.name || bot.username || texts.unknownBot(bot.id)
          const entry = value.find((e) => e.bot_id === bot.id)
          return (
            <li key={bot.id}>
              <label>
                <input
                  type="checkbox"
                  checked={!admin && entry !== undefined}
                  onChange={(e) =>
                    onChange(
                      e.target.checked
                        ? [...value, { bot_id: bot.id, chat_ids: [], abilities: [...defaultAbilities] }]
                        : value.filter((v) => v.bot_id !== bot.id)
                    )}
                />
                {name}
              </label>
              {admin || entry === undefined ? null : (
                <EntryFields
                  entry={entry}
                  name={name}
                  onChange={(changed) => onChange(value.map((v) => v.bot_id === bot.id ? changed : v))}
                />
              )}
            </li>
          )
        })}
      </ul>
      {error === undefined ? null : <p id={`${id}-error`} className="field-error">{error}</p>}
    </fieldset>
  )
}

/** Whether two scopes say the same. */
export const sameScopes = (a: ReadonlyArray<ScopeEntry>, b: ReadonlyArray<ScopeEntry>) =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))

const canonical = (entries: ReadonlyArray<ScopeEntry>) =>
  [...entries].sort((x, y) => x.bot_id - y.bot_id).map((e) => ({
    bot_id: e.bot_id,
    chat_ids: [...e.chat_ids].sort((x, y) => x - y),
    abilities: abilities.filter((a) => e.abilities.includes(a))
  }))
