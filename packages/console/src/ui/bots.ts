import { useQuery } from "@tanstack/react-query"
import { api, type Bot, unwrap } from "../api/client"
import { defineTexts } from "../i18n"
import { useCommonTexts } from "../texts"

const useTexts = defineTexts({
  unknownBot: (id: number) => `bot ${id}`
}, {
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
