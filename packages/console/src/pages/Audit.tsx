import { useInfiniteQuery, useQuery } from "@tanstack/react-query"
import { useId, useMemo, useState } from "react"
import { api, type AuditEntry, unwrap } from "../api/client"
import type { paths } from "../api/schema"
import { defineTexts, useLanguage } from "../i18n"
import { useCommonTexts } from "../texts"
import { ErrorAlert } from "../ui/Alert"
import { useDebounced } from "../ui/useDebounced"
import { useBots } from "../ui/bots"
import { SelectField } from "../ui/Field"

const useTexts = defineTexts({
  title: "Audit log",
  table: "Audit log",
  intro: "Every change, every action with effects outside Botrelay, and every refused attempt, newest first.",
  time: "Time",
  actor: "Actor",
  action: "Action",
  target: "Target",
  outcome: "Outcome",
  bot: "Bot",
  anyActor: "Anyone",
  anyBot: "Any bot",
  accounts: "Accounts",
  keys: "Keys",
  others: "Others",
  cli: "Command line",
  system: "Botrelay itself",
  actionHint: "A whole action name, such as keys.create.",
  clear: "Clear filters",
  loadMore: "Load more",
  loadingMore: "Loading…",
  empty: "No entries match.",
  end: "That is all.",
  outcomeOk: "ok",
  outcomeDenied: "denied",
  outcomeFailed: "failed",
  from: (ip: string) => `from ${ip}`,
  inBot: (bot: string) => `bot: ${bot}`,
  shown: (n: number) => `${n} shown`
}, {
  title: "Журнал действий",
  table: "Журнал действий",
  intro: "Все изменения, действия с последствиями вне Botrelay и отклонённые попытки, новые сверху.",
  time: "Время",
  actor: "Кто",
  action: "Действие",
  target: "Объект",
  outcome: "Итог",
  bot: "Бот",
  anyActor: "Кто угодно",
  anyBot: "Любой бот",
  accounts: "Учётные записи",
  keys: "Ключи",
  others: "Другие",
  cli: "Командная строка",
  system: "Сам Botrelay",
  actionHint: "Полное название действия, например keys.create.",
  clear: "Сбросить фильтры",
  loadMore: "Показать ещё",
  loadingMore: "Загрузка…",
  empty: "Подходящих записей нет.",
  end: "Это всё.",
  outcomeOk: "успех",
  outcomeDenied: "отказано",
  outcomeFailed: "ошибка",
  from: (ip: string) => `с ${ip}`,
  inBot: (bot: string) => `бот: ${bot}`,
  shown: (n: number) => `показано: ${n}`
})

/** The action names Botrelay records (a hint list; any whole name can be typed). */
const knownActions = [
  "accounts.create",
  "accounts.delete",
  "accounts.password",
  "accounts.update",
  "auth.csrf",
  "auth.key",
  "auth.login",
  "auth.logout",
  "bots.add",
  "bots.delete",
  "bots.toggle",
  "bots.update",
  "chats.admin_title",
  "chats.ban",
  "chats.demote",
  "chats.leave",
  "chats.promote",
  "chats.read",
  "chats.refresh",
  "chats.restrict",
  "chats.unban",
  "deliveries.discard",
  "deliveries.replay",
  "deliveries.retry",
  "keys.create",
  "keys.delete",
  "keys.toggle",
  "messages.delete",
  "messages.edit",
  "messages.pin",
  "messages.send",
  "messages.send_media",
  "messages.unpin",
  "routes.add",
  "routes.delete",
  "routes.update",
  "settings.update",
  "tags.add",
  "tags.remove"
]

/** `GET /api/audit`'s query, as the API's contract has it. */
type Query = NonNullable<paths["/api/audit"]["get"]["parameters"]["query"]>

const listAudit = (query: Query) => unwrap(api.GET("/api/audit", { params: { query: { ...query, limit: "50" } } }))

/** Audit times to the second, in the current language. */
const useFormatSeconds = () => {
  const { language } = useLanguage()
  return useMemo(() => {
    const format = new Intl.DateTimeFormat(language === "ru" ? "ru-RU" : "en-GB", { dateStyle: "short", timeStyle: "medium" })
    return (iso: string) => format.format(new Date(iso))
  }, [language])
}

/** `"account:7"` → the API's actor filter. */
const actorFilter = (value: string): Pick<Query, "actor_type" | "actor_id"> => {
  const [type, id] = value.split(":")
  if (type === "account" || type === "key") return { actor_type: type, actor_id: id ?? "0" }
  if (type === "cli" || type === "system") return { actor_type: type }
  return {}
}

const detailText = (details: AuditEntry["details"]) =>
  Object.entries(details)
    .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("; ")

/** `/audit`: table `Audit log` (`Time`, `Actor`, `Action`, `Target`, `Outcome`), filters `Actor`, `Action`, `Bot`, `Load more`. */
export const AuditPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const formatTime = useFormatSeconds()
  const bots = useBots()
  const accounts = useQuery({ queryKey: ["accounts"], queryFn: () => unwrap(api.GET("/api/accounts")) })
  const keys = useQuery({ queryKey: ["api-keys"], queryFn: () => unwrap(api.GET("/api/auth/api-keys")) })
  const [actor, setActor] = useState("")
  const [actionInput, setActionInput] = useState("")
  const [bot, setBot] = useState("")
  const action = useDebounced(actionInput.trim(), 300)
  const actionsId = useId()
  const filters: Query = {
    ...actorFilter(actor),
    ...(action === "" ? {} : { action }),
    ...(bot === "" ? {} : { bot_id: bot })
  }
  const log = useInfiniteQuery({
    queryKey: ["audit", filters],
    queryFn: ({ pageParam }) => listAudit(pageParam === null ? filters : { ...filters, cursor: pageParam }),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor ?? undefined
  })
  const entries = log.data?.pages.flatMap((p) => p.items) ?? []
  const botName = (id: number) => {
    const b = bots.data?.find((x) => x.id === id)
    return b === undefined ? `#${id}` : b.name || b.username || `#${id}`
  }
  const outcome = (o: AuditEntry["outcome"]) =>
    o === "ok" ? texts.outcomeOk : o === "denied" ? texts.outcomeDenied : texts.outcomeFailed
  const actorName = (e: AuditEntry) =>
    e.actor_name !== "" ? e.actor_name : e.actor_type === "cli" ? texts.cli : e.actor_type === "system" ? texts.system : `${e.actor_type} ${e.actor_id}`
  const targetText = (e: AuditEntry) => {
    if (e.target_type === "bot" && e.target_id !== "") return `${e.target_type} ${botName(Number(e.target_id))}`
    return [e.target_type, e.target_id].filter((s) => s !== "").join(" ")
  }
  return (
    <>
      <div className="page-header">
        <h1>{texts.title}</h1>
      </div>
      <p className="muted">{texts.intro}</p>
      <form className="filters" role="search" noValidate onSubmit={(e) => e.preventDefault()}>
        <SelectField label={texts.actor} value={actor} onChange={(e) => setActor(e.target.value)}>
          <option value="">{texts.anyActor}</option>
          <optgroup label={texts.accounts}>
            {(accounts.data ?? []).map((a) => (
              <option key={a.id} value={`account:${a.id}`}>{a.display_name || a.username}</option>
            ))}
          </optgroup>
          <optgroup label={texts.keys}>
            {(keys.data ?? []).map((k) => <option key={k.id} value={`key:${k.id}`}>{k.name}</option>)}
          </optgroup>
          <optgroup label={texts.others}>
            <option value="cli">{texts.cli}</option>
            <option value="system">{texts.system}</option>
          </optgroup>
        </SelectField>
        <div className="field">
          <label htmlFor={actionsId}>{texts.action}</label>
          <input
            id={actionsId}
            type="search"
            list={actionsId + "-list"}
            value={actionInput}
            onChange={(e) => setActionInput(e.target.value)}
            aria-describedby={actionsId + "-hint"}
            autoComplete="off"
            spellCheck={false}
          />
          <datalist id={actionsId + "-list"}>
            {knownActions.map((a) => <option key={a} value={a} />)}
          </datalist>
          <p id={actionsId + "-hint"} className="field-hint">{texts.actionHint}</p>
        </div>
        <SelectField label={texts.bot} value={bot} onChange={(e) => setBot(e.target.value)}>
          <option value="">{texts.anyBot}</option>
          {(bots.data ?? []).map((b) => <option key={b.id} value={String(b.id)}>{b.name || b.username}</option>)}
        </SelectField>
        {actor !== "" || actionInput !== "" || bot !== ""
          ? (
            <button
              type="button"
              onClick={() => {
                setActor("")
                setActionInput("")
                setBot("")
              }}
            >
              {texts.clear}
            </button>
          )
          : null}
      </form>
      <ErrorAlert error={log.error ?? undefined} />
      <div className="table-wrap">
        <table aria-label={texts.table} aria-busy={log.isFetching}>
          <thead>
            <tr>
              <th scope="col">{texts.time}</th>
              <th scope="col">{texts.actor}</th>
              <th scope="col">{texts.action}</th>
              <th scope="col">{texts.target}</th>
              <th scope="col">{texts.outcome}</th>
            </tr>
          </thead>
          <tbody>
            {log.isPending
              ? (
                <tr>
                  <td colSpan={5}>{common.loading}</td>
                </tr>
              )
              : entries.length === 0
              ? (
                <tr>
                  <td colSpan={5}>{texts.empty}</td>
                </tr>
              )
              : entries.map((e) => (
                <tr key={e.id} className={e.outcome === "ok" ? undefined : "audit-" + e.outcome}>
                  <td>
                    <time dateTime={e.at}>{formatTime(e.at)}</time>
                  </td>
                  <td>{actorName(e)}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>{targetText(e)}</td>
                  <td>
                    {outcome(e.outcome)}
                    <div className="muted audit-details">
                      {[
                        detailText(e.details),
                        e.bot_id !== null && !(e.target_type === "bot") ? texts.inBot(botName(e.bot_id)) : "",
                        e.ip === "" ? "" : texts.from(e.ip)
                      ].filter((s) => s !== "").join("; ")}
                    </div>
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
      <div className="audit-more">
        <span className="muted" role="status">
          {log.isSuccess ? texts.shown(entries.length) : ""}
          {log.isSuccess && !log.hasNextPage && entries.length > 0 ? ` · ${texts.end}` : ""}
        </span>
        {log.hasNextPage
          ? (
            <button type="button" onClick={() => void log.fetchNextPage()} disabled={log.isFetchingNextPage}>
              {log.isFetchingNextPage ? texts.loadingMore : texts.loadMore}
            </button>
          )
          : null}
      </div>
    </>
  )
}
