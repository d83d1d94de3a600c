import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { api, type Delivery, unwrap } from "../api/client"
import { defineTexts, useFormatTime } from "../i18n"
import { isAdmin, useAccount } from "../session"
import { useCommonTexts } from "../texts"
import { ErrorAlert } from "../ui/Alert"
import { Confirm } from "../ui/Confirm"
import { useBots } from "../ui/BotPicker"
import { botLabelById } from "./Bots"

const useTexts = defineTexts({
  title: "Deliveries",
  intro: "Updates a bot's backend did not accept in time. Retrying one puts it back in line, due now.",
  table: "Dead letters",
  bot: "Bot",
  update: "Update",
  attempts: "Attempts",
  lastError: "Last error",
  time: "Time",
  actions: "Actions",
  retry: "Retry",
  retryAll: "Retry all",
  discard: "Discard",
  discardBody: (update: number) => `Update ${update} will never reach the backend. This cannot be undone.`,
  empty: "No dead letters."
}, {
  title: "Доставки",
  intro: "Обновления, которые бэкенд бота не принял вовремя. Повтор ставит обновление обратно в очередь, сразу.",
  table: "Недоставленные",
  bot: "Бот",
  update: "Обновление",
  attempts: "Попытки",
  lastError: "Последняя ошибка",
  time: "Время",
  actions: "Действия",
  retry: "Повторить",
  retryAll: "Повторить все",
  discard: "Отбросить",
  discardBody: (update: number) => `Обновление ${update} никогда не попадёт в бэкенд. Это нельзя отменить.`,
  empty: "Недоставленных нет."
})

const deliveriesKey = ["deliveries", "dead"] as const
const limit = "500"
const refreshEvery = 10_000

/** The kind of update a delivery carries (`message`, `callback_query`, ...), from its payload. */
const kindOf = (delivery: Delivery) => {
  try {
    const update: unknown = JSON.parse(delivery.payload)
    return typeof update === "object" && update !== null ? Object.keys(update).find((k) => k !== "update_id") : undefined
  } catch {
    return undefined
  }
}

/**
 * Dead deliveries of every bot the account sees, newest first: admins ask once for all bots,
 * operators once per bot of theirs (the API wants their `bot_id`).
 */
const useDeadLetters = (admin: boolean, botIds: ReadonlyArray<number> | undefined) => {
  const all = useQuery({
    queryKey: deliveriesKey,
    queryFn: () => unwrap(api.GET("/api/bots/deliveries", { params: { query: { status: "dead", limit } } })),
    enabled: admin,
    refetchInterval: refreshEvery
  })
  const perBot = useQueries({
    queries: (admin ? [] : botIds ?? []).map((id) => ({
      queryKey: [...deliveriesKey, id],
      queryFn: () =>
        unwrap(api.GET("/api/bots/deliveries", { params: { query: { bot_id: String(id), status: "dead", limit } } })),
      refetchInterval: refreshEvery
    })),
    combine: (results) => ({
      data: results.every((r) => r.data !== undefined)
        ? results.flatMap((r) => r.data ?? []).sort((a, b) => b.id - a.id)
        : undefined,
      error: results.find((r) => r.error !== null)?.error ?? null
    })
  })
  if (admin) return { data: all.data, error: all.error }
  return botIds === undefined ? { data: undefined, error: null } : perBot
}

/** `/deliveries`: table `Dead letters`; admins put them back in line (`Retry`, `Retry all`) or give them up (`Discard`). */
export const DeliveriesPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const formatTime = useFormatTime()
  const admin = isAdmin(useAccount())
  const client = useQueryClient()
  const bots = useBots()
  const dead = useDeadLetters(admin, bots.data?.map((b) => b.id))
  const [retrying, setRetrying] = useState<number | undefined>(undefined)
  const retry = useMutation({
    mutationFn: async (ids: ReadonlyArray<number>) => {
      for (const id of ids) {
        await unwrap(api.POST("/api/bots/deliveries/retry", { params: { query: { id: String(id) } } }))
      }
    },
    onMutate: (ids) => setRetrying(ids.length === 1 ? ids[0] : undefined),
    onSettled: async () => {
      setRetrying(undefined)
      await client.invalidateQueries({ queryKey: ["deliveries"] })
    }
  })
  const [discarding, setDiscarding] = useState<Delivery | undefined>(undefined)
  const discard = async (id: number) => {
    await unwrap(api.POST("/api/bots/deliveries/discard", { params: { query: { id: String(id) } } }))
    await client.invalidateQueries({ queryKey: ["deliveries"] })
  }
  const rows = dead.data ?? []
  return (
    <>
      <div className="page-header">
        <h1>{texts.title}</h1>
        {admin
          ? (
            <button
              type="button"
              onClick={() => retry.mutate(rows.map((d) => d.id))}
              disabled={rows.length === 0 || retry.isPending}
            >
              {texts.retryAll}
            </button>
          )
          : null}
      </div>
      <p className="muted">{texts.intro}</p>
      <ErrorAlert error={dead.error ?? bots.error ?? retry.error} />
      <div className="table-wrap">
        <table aria-label={texts.table}>
          <thead>
            <tr>
              <th scope="col">{texts.bot}</th>
              <th scope="col">{texts.update}</th>
              <th scope="col">{texts.attempts}</th>
              <th scope="col">{texts.lastError}</th>
              <th scope="col">{texts.time}</th>
              {admin ? <th scope="col"><span className="visually-hidden">{texts.actions}</span></th> : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((delivery) => {
              const kind = kindOf(delivery)
              return (
                <tr key={delivery.id}>
                  <td>{botLabelById(bots.data, delivery.bot_id)}</td>
                  <td>
                    {delivery.update_id}
                    {kind === undefined ? null : <span className="muted"> · {kind}</span>}
                  </td>
                  <td>{delivery.attempts}</td>
                  <td className="delivery-error">{delivery.last_error}</td>
                  <td>
                    <time dateTime={delivery.updated_at}>{formatTime(delivery.updated_at)}</time>
                  </td>
                  {admin
                    ? (
                      <td className="actions">
                        <button
                          type="button"
                          onClick={() => retry.mutate([delivery.id])}
                          disabled={retry.isPending && (retrying === undefined || retrying === delivery.id)}
                        >
                          {texts.retry}
                        </button>
                        <button type="button" onClick={() => setDiscarding(delivery)}>{texts.discard}</button>
                      </td>
                    )
                    : null}
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
      {dead.data === undefined && dead.error === null ? <p className="muted">{common.loading}</p> : null}
      {dead.data?.length === 0 ? <p className="muted">{texts.empty}</p> : null}
      <Confirm
        title={texts.discard}
        action={texts.discard}
        body={discarding === undefined ? "" : texts.discardBody(discarding.update_id)}
        open={discarding !== undefined}
        onClose={() => setDiscarding(undefined)}
        onConfirm={() => discard(discarding!.id)}
      />
    </>
  )
}
