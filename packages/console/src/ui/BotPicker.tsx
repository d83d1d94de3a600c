import { useQuery } from "@tanstack/react-query"
import { useId } from "react"
import { api, type Bot, unwrap } from "../api/client"
import { defineTexts } from "../i18n"
import { useCommonTexts } from "../texts"

const useTexts = defineTexts({
  bots: "Bots",
  noBots: "There are no bots yet.",
  adminsSeeAll: "Admins act on every bot.",
  operatorScope: "The bots this operator may use; none chosen means none.",
  unknownBot: (id: number) => `bot ${id}`
}, {
  bots: "Боты",
  noBots: "Ботов пока нет.",
  adminsSeeAll: "Администраторы работают со всеми ботами.",
  operatorScope: "Боты, с которыми может работать оператор; если не выбран ни один — ни с какими.",
  unknownBot: (id: number) => `бот ${id}`
})

export const botsKey = ["bots"] as const

/** The bots the signed-in account sees (`GET /api/bots`), ordered by id; read again every `refreshEvery` ms, if given. */
export const useBots = (refreshEvery?: number) =>
  useQuery({
    queryKey: botsKey,
    queryFn: () => unwrap(api.GET("/api/bots")),
    ...(refreshEvery === undefined ? {} : { refetchInterval: refreshEvery })
  })

/** A role's bots in words: "all bots" for admins, the bots' names for operators ("none" when empty). */
export const useBotNames = () => {
  const common = useCommonTexts()
  const texts = useTexts()
  const bots = useBots()
  const byId = new Map<number, Bot>((bots.data ?? []).map((b) => [b.id, b]))
  return (role: "admin" | "operator", ids: ReadonlyArray<number>) =>
    role === "admin"
      ? common.allBots
      : ids.length === 0
      ? common.none
      : ids.map((id) => byId.get(id)?.name || byId.get(id)?.username || texts.unknownBot(id)).join(", ")
}

/**
 * `Bots`: a fieldset of checkboxes, one per bot named by the bot's name, for an operator's scope; disabled
 * (admins see every bot) when `role` is admin. `error` is the API's sentence about `bot_ids`.
 */
export const BotPicker = ({ role, value, onChange, error }: {
  readonly role: "admin" | "operator"
  readonly value: ReadonlyArray<number>
  readonly onChange: (ids: ReadonlyArray<number>) => void
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
        {list.map((bot) => (
          <li key={bot.id}>
            <label>
              <input
                type="checkbox"
                checked={!admin && value.includes(bot.id)}
                onChange={(e) =>
                  onChange(e.target.checked ? [...value, bot.id] : value.filter((v) => v !== bot.id))}
              />
              {bot.name || bot.username || texts.unknownBot(bot.id)}
            </label>
          </li>
        ))}
      </ul>
      {error === undefined ? null : <p id={`${id}-error`} className="field-error">{error}</p>}
    </fieldset>
  )
}
