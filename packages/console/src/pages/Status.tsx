import { useQuery } from "@tanstack/react-query"
import { useMemo } from "react"
import { api, type Schemas, unwrap } from "../api/client"
import { defineTexts, useLanguage } from "../i18n"
import { useCommonTexts } from "../texts"
import { ErrorAlert } from "../ui/Alert"
import { useBots } from "../ui/bots"

/** How often the page asks again, in milliseconds. */
const refreshEvery = 5000

const useTexts = defineTexts({
  title: "Status",
  intro: "The instances serving Botrelay and how each bot stands, refreshed every 5 seconds.",
  instances: "Instances",
  botStatus: "Bot status",
  instance: "Instance",
  version: "Version",
  started: "Started",
  heartbeat: "Last heartbeat",
  leases: "Bots held",
  bot: "Bot",
  mode: "Mode",
  lease: "Lease",
  ingress: "Ingress",
  outbox: "Outbox",
  consumers: "Consumers",
  polling: "polling",
  webhook: "webhook",
  sendOnly: "send-only",
  thisInstance: "this instance",
  noLease: "none",
  epoch: (n: number) => `epoch ${n}`,
  lag: (s: number | null) => s === null ? "polled elsewhere" : `last poll ${s.toFixed(1)} s ago`,
  lastUpdate: (at: string) => at === "" ? "no update yet" : `last update ${at}`,
  pending: (n: number) => `${n} pending at Telegram`,
  webhookError: (message: string) => `error: ${message}`,
  queue: (depth: number, dead: number, age: number) =>
    `${depth} waiting${depth > 0 ? ` (oldest ${Math.round(age)} s)` : ""}, ${dead} dead`,
  consumer: (kind: string, id: number, position: number, lag: number) =>
    `${kind === "long_poll" ? "long poll" : kind} ${kind === "route" ? `#${id} ` : ""}at ${position}, ${lag} behind`
}, {
  title: "Состояние",
  intro: "Экземпляры Botrelay и состояние каждого бота; обновляется каждые 5 секунд.",
  instances: "Экземпляры",
  botStatus: "Состояние ботов",
  instance: "Экземпляр",
  version: "Версия",
  started: "Запущен",
  heartbeat: "Последний сигнал",
  leases: "Ботов",
  bot: "Бот",
  mode: "Режим",
  lease: "Аренда",
  ingress: "Приём",
  outbox: "Очередь",
  consumers: "Получатели",
  polling: "опрос",
  webhook: "вебхук",
  sendOnly: "только отправка",
  thisInstance: "этот экземпляр",
  noLease: "нет",
  epoch: (n: number) => `эпоха ${n}`,
  lag: (s: number | null) => s === null ? "опрашивает другой экземпляр" : `последний опрос ${s.toFixed(1)} с назад`,
  lastUpdate: (at: string) => at === "" ? "обновлений ещё не было" : `последнее обновление ${at}`,
  pending: (n: number) => `${n} ждут в Telegram`,
  webhookError: (message: string) => `ошибка: ${message}`,
  queue: (depth: number, dead: number, age: number) =>
    `ждут: ${depth}${depth > 0 ? ` (старшее ${Math.round(age)} с)` : ""}, не доставлено: ${dead}`,
  consumer: (kind: string, id: number, position: number, lag: number) =>
    `${kind === "long_poll" ? "long poll" : kind === "route" ? `маршрут #${id}` : "бэкенд"}: позиция ${position}, отставание ${lag}`
})

type BotStatus = Schemas["BotStatus"]

/** Times to the second, in the current language. */
const useFormatTime = () => {
  const { language } = useLanguage()
  return useMemo(() => {
    const format = new Intl.DateTimeFormat(language === "ru" ? "ru-RU" : "en-GB", { dateStyle: "short", timeStyle: "medium" })
    return (iso: string) => iso === "" ? "" : format.format(new Date(iso))
  }, [language])
}

/** `/status` (admins): tables `Instances` and `Bot status`, refreshed every few seconds. */
export const StatusPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const formatTime = useFormatTime()
  const bots = useBots(refreshEvery)
  const status = useQuery({
    queryKey: ["status"],
    queryFn: () => unwrap(api.GET("/api/status")),
    refetchInterval: refreshEvery
  })
  const botName = (id: number) => {
    const b = bots.data?.find((x) => x.id === id)
    return b === undefined ? `#${id}` : b.name || b.username || `#${id}`
  }
  const modeText = (mode: BotStatus["mode"]) =>
    mode === "polling" ? texts.polling : mode === "webhook" ? texts.webhook : texts.sendOnly
  const ingressText = (ingress: BotStatus["ingress"]) =>
    ingress === null
      ? common.none
      : "lag_s" in ingress
      ? `${texts.lag(ingress.lag_s)}; ${texts.lastUpdate(formatTime(ingress.last_update_at))}`
      : [texts.pending(ingress.pending_update_count), ingress.last_error_message === "" ? "" : texts.webhookError(ingress.last_error_message)]
        .filter((s) => s !== "").join("; ")
  const self = status.data?.self
  return (
    <>
      <div className="page-header">
        <h1>{texts.title}</h1>
      </div>
      <p className="muted">{texts.intro}</p>
      <ErrorAlert error={status.error ?? undefined} />
      {status.data === undefined && status.isPending ? <p>{common.loading}</p> : null}
      <div className="table-wrap">
        <table aria-busy={status.isFetching}>
          <caption>{texts.instances}</caption>
          <thead>
            <tr>
              <th scope="col">{texts.instance}</th>
              <th scope="col">{texts.version}</th>
              <th scope="col">{texts.started}</th>
              <th scope="col">{texts.heartbeat}</th>
              <th scope="col">{texts.leases}</th>
            </tr>
          </thead>
          <tbody>
            {(status.data?.instances ?? []).map((instance) => (
              <tr key={instance.id}>
                <th scope="row">{instance.id}{instance.id === self ? ` (${texts.thisInstance})` : ""}</th>
                <td>{instance.version}</td>
                <td>{formatTime(instance.started_at)}</td>
                <td>{formatTime(instance.last_heartbeat_at)}</td>
                <td>{instance.leases}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="table-wrap">
        <table aria-busy={status.isFetching}>
          <caption>{texts.botStatus}</caption>
          <thead>
            <tr>
              <th scope="col">{texts.bot}</th>
              <th scope="col">{texts.mode}</th>
              <th scope="col">{texts.lease}</th>
              <th scope="col">{texts.ingress}</th>
              <th scope="col">{texts.outbox}</th>
              <th scope="col">{texts.consumers}</th>
            </tr>
          </thead>
          <tbody>
            {(status.data?.bots ?? []).map((bot) => (
              <tr key={bot.bot_id}>
                <th scope="row">{botName(bot.bot_id)}</th>
                <td>{modeText(bot.mode)}</td>
                <td>{bot.lease === null ? texts.noLease : `${bot.lease.instance_id}, ${texts.epoch(bot.lease.epoch)}`}</td>
                <td>{ingressText(bot.ingress)}</td>
                <td>{texts.queue(bot.outbox.depth, bot.outbox.dead, bot.outbox.oldest_pending_age_s)}</td>
                <td>
                  {bot.consumers.length === 0 ? common.none : (
                    <ul className="plain">
                      {bot.consumers.map((c) => (
                        <li key={`${c.kind}-${c.id}`}>{texts.consumer(c.kind, c.id, c.position, c.lag)}</li>
                      ))}
                    </ul>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  )
}
