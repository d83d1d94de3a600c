import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { api, ApiFailure, type Bot, type Delivery, type Schemas, unwrap } from "../api/client"
import { defineTexts, useFormatTime } from "../i18n"
import { isAdmin, useAccount } from "../session"
import { useCommonTexts } from "../texts"
import { ErrorAlert } from "../ui/Alert"
import { Confirm } from "../ui/Confirm"
import { useBots } from "../ui/bots"
import { SelectField, TextField } from "../ui/Field"
import { botLabelById } from "./Bots"

type Status = Delivery["status"]

const useTexts = defineTexts({
  title: "Deliveries",
  intro: "Updates on their way to the bots' backends. Dead letters are those a backend did not accept in time: " +
    "retrying one puts it back in line, due now; discarding one gives it up for good.",
  table: "Dead letters",
  bot: "Bot",
  allBots: "All bots",
  status: "Status",
  anyStatus: "Any",
  pending: "Pending",
  delivered: "Delivered",
  dead: "Dead",
  discarded: "Discarded",
  update: "Update",
  attempts: "Attempts",
  lastError: "Last error",
  time: "Time",
  actions: "Actions",
  retry: "Retry",
  retryAllDead: "Retry all",
  discardAllDead: "Discard all",
  retryAllBody: (bots: string) => `Every dead delivery of ${bots} goes back in line, due now.`,
  discardAllBody: (bots: string) => `Every dead delivery of ${bots} will never reach the backend. This cannot be undone.`,
  everyBot: "every bot you see",
  retried: (n: number) => `${n} put back in line.`,
  discardedAll: (n: number) => `${n} discarded.`,
  discard: "Discard",
  discardBody: (update: number) => `Update ${update} will never reach the backend. This cannot be undone.`,
  empty: "No deliveries match.",
  replay: "Replay",
  replayIntro: "Delivers stored updates to the bot's backend again, in order, behind what is waiting. " +
    "Updates are kept 24 hours; those a drop route removed are skipped.",
  range: "Range",
  byUpdateId: "By update_id",
  byTime: "By time received",
  fromUpdateId: "From update_id",
  toUpdateId: "To update_id",
  from: "From",
  to: "To",
  chooseBot: "Choose a bot",
  replayed: (queued: number, missing: number) => `${queued} queued, ${missing} missing.`
}, {
  title: "Доставки",
  intro: "Обновления на пути к бэкендам ботов. Недоставленные — те, что бэкенд не принял вовремя: " +
    "повтор ставит обновление обратно в очередь, сразу; отбрасывание отменяет его навсегда.",
  table: "Недоставленные",
  bot: "Бот",
  allBots: "Все боты",
  status: "Состояние",
  anyStatus: "Любое",
  pending: "В очереди",
  delivered: "Доставлено",
  dead: "Не доставлено",
  discarded: "Отброшено",
  update: "Обновление",
  attempts: "Попытки",
  lastError: "Последняя ошибка",
  time: "Время",
  actions: "Действия",
  retry: "Повторить",
  retryAllDead: "Повторить все недоставленные",
  discardAllDead: "Отбросить все недоставленные",
  retryAllBody: (bots: string) => `Все недоставленные обновления (${bots}) снова встанут в очередь, сразу.`,
  discardAllBody: (bots: string) => `Все недоставленные обновления (${bots}) никогда не попадут в бэкенд. Это нельзя отменить.`,
  everyBot: "все видимые вам боты",
  retried: (n: number) => `Снова в очереди: ${n}.`,
  discardedAll: (n: number) => `Отброшено: ${n}.`,
  discard: "Отбросить",
  discardBody: (update: number) => `Обновление ${update} никогда не попадёт в бэкенд. Это нельзя отменить.`,
  empty: "Подходящих доставок нет.",
  replay: "Повторная доставка",
  replayIntro: "Снова доставляет сохранённые обновления в бэкенд бота, по порядку, после ожидающих. " +
    "Обновления хранятся 24 часа; отброшенные маршрутом drop пропускаются.",
  range: "Диапазон",
  byUpdateId: "По update_id",
  byTime: "По времени получения",
  fromUpdateId: "С update_id",
  toUpdateId: "По update_id",
  from: "С",
  to: "По",
  chooseBot: "Выберите бота",
  replayed: (queued: number, missing: number) => `В очереди: ${queued}, нет: ${missing}.`
})

const limit = "500"
const refreshEvery = 10_000
const statuses: ReadonlyArray<Status> = ["pending", "delivered", "dead", "discarded"]

/** The kind of update a delivery carries (`message`, `callback_query`, ...), from its payload. */
const kindOf = (delivery: Delivery) => {
  try {
    const update: unknown = JSON.parse(delivery.payload)
    return typeof update === "object" && update !== null ? Object.keys(update).find((k) => k !== "update_id") : undefined
  } catch {
    return undefined
  }
}

const listDeliveries = (botId: number | undefined, status: Status | "") =>
  unwrap(api.GET("/api/deliveries", {
    params: {
      query: {
        limit,
        ...(status === "" ? {} : { status }),
        ...(botId === undefined ? {} : { bot_id: String(botId) })
      }
    }
  }))

/**
 * Deliveries of the chosen bot (or every bot the account sees) with the chosen status, newest first: admins
 * ask once for all bots, operators once per bot of theirs (the API wants their `bot_id`).
 */
const useDeliveries = (admin: boolean, botIds: ReadonlyArray<number> | undefined, bot: number | undefined, status: Status | "") => {
  const all = useQuery({
    queryKey: ["deliveries", status, bot ?? "all"],
    queryFn: () => listDeliveries(bot, status),
    enabled: admin || bot !== undefined,
    refetchInterval: refreshEvery
  })
  const perBot = useQueries({
    queries: (admin || bot !== undefined ? [] : botIds ?? []).map((id) => ({
      queryKey: ["deliveries", status, id],
      queryFn: () => listDeliveries(id, status),
      refetchInterval: refreshEvery
    })),
    combine: (results) => ({
      data: results.every((r) => r.data !== undefined)
        ? results.flatMap((r) => r.data ?? []).sort((a, b) => b.id - a.id)
        : undefined,
      error: results.find((r) => r.error !== null)?.error ?? null
    })
  })
  if (admin || bot !== undefined) return { data: all.data, error: all.error }
  return botIds === undefined ? { data: undefined, error: null } : perBot
}

/** Unix seconds of a `datetime-local` value (the browser's time zone); `undefined` when empty. */
const unixSeconds = (value: string) => value === "" ? undefined : Math.floor(new Date(value).getTime() / 1000)

/** `Replay`: a bot, an update_id or receive-time range, and the answer `{queued, missing}`. */
const ReplayForm = ({ bots }: { readonly bots: ReadonlyArray<Bot> }) => {
  const texts = useTexts()
  const client = useQueryClient()
  const withBackend = bots.filter((b) => b.backend_url !== "")
  const [bot, setBot] = useState("")
  const [mode, setMode] = useState<"ids" | "time">("ids")
  const [fromId, setFromId] = useState("")
  const [toId, setToId] = useState("")
  const [from, setFrom] = useState("")
  const [to, setTo] = useState("")
  const replay = useMutation({
    mutationFn: (body: Schemas["ReplayRequest"]) => unwrap(api.POST("/api/deliveries/replay", { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ["deliveries"] })
  })
  const failure = replay.error instanceof ApiFailure ? replay.error : undefined
  const field = (name: string) => failure?.fieldMessage(name)
  const number = (value: string) => value.trim() === "" ? undefined : Number(value)
  const submit = (e: FormEvent) => {
    e.preventDefault()
    const range = mode === "ids"
      ? { from_update_id: number(fromId), to_update_id: number(toId) }
      : { from: unixSeconds(from), to: unixSeconds(to) }
    replay.mutate({
      bot_id: Number(bot),
      ...Object.fromEntries(Object.entries(range).filter(([, v]) => v !== undefined))
    })
  }
  return (
    <section aria-labelledby="replay-heading" className="replay">
      <h2 id="replay-heading">{texts.replay}</h2>
      <p className="muted">{texts.replayIntro}</p>
      <form className="filters" aria-labelledby="replay-heading" noValidate onSubmit={submit}>
        <SelectField label={texts.bot} value={bot} onChange={(e) => setBot(e.target.value)} required error={field("bot_id")}>
          <option value="" disabled>{texts.chooseBot}</option>
          {withBackend.map((b) => <option key={b.id} value={String(b.id)}>{b.name || b.username}</option>)}
        </SelectField>
        <SelectField label={texts.range} value={mode} onChange={(e) => setMode(e.target.value as "ids" | "time")}>
          <option value="ids">{texts.byUpdateId}</option>
          <option value="time">{texts.byTime}</option>
        </SelectField>
        {mode === "ids"
          ? (
            <>
              <TextField
                label={texts.fromUpdateId}
                inputMode="numeric"
                value={fromId}
                onChange={(e) => setFromId(e.target.value)}
                error={field("from_update_id")}
              />
              <TextField
                label={texts.toUpdateId}
                inputMode="numeric"
                value={toId}
                onChange={(e) => setToId(e.target.value)}
                error={field("to_update_id")}
              />
            </>
          )
          : (
            <>
              <TextField label={texts.from} type="datetime-local" step={1} value={from} onChange={(e) => setFrom(e.target.value)} error={field("from")} />
              <TextField label={texts.to} type="datetime-local" step={1} value={to} onChange={(e) => setTo(e.target.value)} error={field("to")} />
            </>
          )}
        <button type="submit" className="primary" disabled={bot === "" || replay.isPending}>{texts.replay}</button>
      </form>
      <ErrorAlert error={failure !== undefined && failure.details.some((d) => d.path !== "") ? undefined : replay.error ?? undefined} />
      <p role="status" className="muted">{replay.data === undefined ? "" : texts.replayed(replay.data.queued, replay.data.missing)}</p>
    </section>
  )
}

/**
 * `/deliveries`: filters `Bot` and `Status` (dead by default), table `Dead letters` with `Retry` and `Discard` on
 * dead rows, `Retry all` and `Discard all` (confirmed) for the chosen bot or every bot seen, and `Replay`.
 * Operators see and act on their bots only.
 */
export const DeliveriesPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const formatTime = useFormatTime()
  const admin = isAdmin(useAccount())
  const client = useQueryClient()
  const bots = useBots()
  const [botFilter, setBotFilter] = useState("")
  const [status, setStatus] = useState<Status | "">("dead")
  const chosenBot = botFilter === "" ? undefined : Number(botFilter)
  const deliveries = useDeliveries(admin, bots.data?.map((b) => b.id), chosenBot, status)
  const refresh = () => client.invalidateQueries({ queryKey: ["deliveries"] })
  const [retrying, setRetrying] = useState<number | undefined>(undefined)
  const retry = useMutation({
    mutationFn: (id: number) => unwrap(api.POST("/api/deliveries/retry", { params: { query: { id: String(id) } } })),
    onMutate: (id) => setRetrying(id),
    onSettled: async () => {
      setRetrying(undefined)
      await refresh()
    }
  })
  const [discarding, setDiscarding] = useState<Delivery | undefined>(undefined)
  const discard = async (id: number) => {
    await unwrap(api.POST("/api/deliveries/discard", { params: { query: { id: String(id) } } }))
    await refresh()
  }
  const [bulk, setBulk] = useState<"retry" | "discard" | undefined>(undefined)
  const [bulkResult, setBulkResult] = useState("")
  const targets = chosenBot === undefined ? (bots.data ?? []).map((b) => b.id) : [chosenBot]
  const runBulk = async (action: "retry" | "discard") => {
    let n = 0
    for (const id of targets) {
      const query = { params: { query: { bot_id: String(id) } } }
      if (action === "retry") {
        const answer = await unwrap(api.POST("/api/deliveries/retry", query))
        n += "retried" in answer ? answer.retried : 1
      } else {
        const answer = await unwrap(api.POST("/api/deliveries/discard", query))
        n += "discarded" in answer ? answer.discarded : 1
      }
    }
    setBulkResult(action === "retry" ? texts.retried(n) : texts.discardedAll(n))
    await refresh()
  }
  const bulkBots = chosenBot === undefined ? texts.everyBot : botLabelById(bots.data, chosenBot)
  const rows = deliveries.data ?? []
  return (
    <>
      <div className="page-header">
        <h1>{texts.title}</h1>
        <div className="tools">
          <button type="button" onClick={() => setBulk("retry")} disabled={targets.length === 0}>
            {texts.retryAllDead}
          </button>
          <button type="button" onClick={() => setBulk("discard")} disabled={targets.length === 0}>
            {texts.discardAllDead}
          </button>
        </div>
      </div>
      <p className="muted">{texts.intro}</p>
      <form className="filters" role="search" noValidate onSubmit={(e) => e.preventDefault()}>
        <SelectField label={texts.bot} value={botFilter} onChange={(e) => setBotFilter(e.target.value)}>
          <option value="">{texts.allBots}</option>
          {(bots.data ?? []).map((b) => <option key={b.id} value={String(b.id)}>{b.name || b.username}</option>)}
        </SelectField>
        <SelectField label={texts.status} value={status} onChange={(e) => setStatus(e.target.value as Status | "")}>
          <option value="">{texts.anyStatus}</option>
          {statuses.map((s) => <option key={s} value={s}>{texts[s]}</option>)}
        </SelectField>
      </form>
      <p role="status" className="muted">{bulkResult}</p>
      <ErrorAlert error={deliveries.error ?? bots.error ?? retry.error} />
      <div className="table-wrap">
        <table aria-label={texts.table}>
          <thead>
            <tr>
              <th scope="col">{texts.bot}</th>
              <th scope="col">{texts.update}</th>
              <th scope="col">{texts.status}</th>
              <th scope="col">{texts.attempts}</th>
              <th scope="col">{texts.lastError}</th>
              <th scope="col">{texts.time}</th>
              <th scope="col"><span className="visually-hidden">{texts.actions}</span></th>
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
                  <td>{texts[delivery.status]}</td>
                  <td>{delivery.attempts}</td>
                  <td className="delivery-error">{delivery.last_error}</td>
                  <td>
                    <time dateTime={delivery.updated_at}>{formatTime(delivery.updated_at)}</time>
                  </td>
                  <td className="actions">
                    {delivery.status === "dead"
                      ? (
                        <>
                          <button
                            type="button"
                            onClick={() => retry.mutate(delivery.id)}
                            disabled={retry.isPending && retrying === delivery.id}
                          >
                            {texts.retry}
                          </button>
                          <button type="button" onClick={() => setDiscarding(delivery)}>{texts.discard}</button>
                        </>
                      )
                      : null}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
      {deliveries.data === undefined && deliveries.error === null ? <p className="muted">{common.loading}</p> : null}
      {deliveries.data?.length === 0 ? <p className="muted">{texts.empty}</p> : null}
      <ReplayForm bots={bots.data ?? []} />
      <Confirm
        title={texts.discard}
        action={texts.discard}
        body={discarding === undefined ? "" : texts.discardBody(discarding.update_id)}
        open={discarding !== undefined}
        onClose={() => setDiscarding(undefined)}
        onConfirm={() => discard(discarding!.id)}
      />
      <Confirm
        title={bulk === "discard" ? texts.discardAllDead : texts.retryAllDead}
        action={bulk === "discard" ? texts.discardAllDead : texts.retryAllDead}
        body={bulk === "discard" ? texts.discardAllBody(bulkBots) : texts.retryAllBody(bulkBots)}
        open={bulk !== undefined}
        danger={bulk === "discard"}
        onClose={() => setBulk(undefined)}
        onConfirm={() => runBulk(bulk!)}
      />
    </>
  )
}
