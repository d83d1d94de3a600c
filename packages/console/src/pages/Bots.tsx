import { useMutation, useQueryClient } from "@tanstack/react-query"
import { useEffect, useRef, useState } from "react"
import { api, ApiFailure, type Bot, type Schemas, unwrap } from "../api/client"
import { defineTexts } from "../i18n"
import { isAdmin, useAccount } from "../session"
import { useCommonTexts } from "../texts"
import { ErrorAlert, fieldErrors } from "../ui/Alert"
import { Confirm } from "../ui/Confirm"
import { botsKey, useBots } from "../ui/bots"
import { Dialog } from "../ui/Dialog"
import { CheckboxField, TextField } from "../ui/Field"

const useTexts = defineTexts({
  title: "Bots",
  table: "Bots",
  name: "Name",
  username: "Username",
  status: "Status",
  mode: "Mode",
  flags: "Flags",
  actions: "Actions",
  addBot: "Add bot",
  editBot: "Edit bot",
  token: "Token",
  tokenKeep: "Leave blank to keep the current token.",
  backendUrl: "Backend URL",
  backendUrlHint: "Where updates are forwarded when Proxy is on.",
  manage: "Manage",
  proxy: "Proxy",
  longPolling: "Long polling",
  running: "running",
  stopped: "stopped",
  disabled: "disabled",
  lastError: (error: string) => `Last error: ${error}`,
  webhook: "webhook",
  polling: "polling",
  empty: "No bots yet.",
  deleteBot: "Delete",
  deleteBody: (name: string) =>
    `Delete the bot ${name}? Its routes and its message history are deleted with it. Telegram keeps the bot itself.`
}, {
  title: "Боты",
  table: "Боты",
  name: "Название",
  username: "Имя пользователя",
  status: "Состояние",
  mode: "Режим",
  flags: "Возможности",
  actions: "Действия",
  addBot: "Добавить бота",
  editBot: "Изменить бота",
  token: "Токен",
  tokenKeep: "Оставьте пустым, чтобы сохранить текущий токен.",
  backendUrl: "URL бэкенда",
  backendUrlHint: "Куда пересылаются обновления, когда включён прокси.",
  manage: "Управление",
  proxy: "Прокси",
  longPolling: "Длинный опрос",
  running: "работает",
  stopped: "остановлен",
  disabled: "отключён",
  lastError: (error: string) => `Последняя ошибка: ${error}`,
  webhook: "вебхук",
  polling: "опрос",
  empty: "Ботов пока нет.",
  deleteBot: "Удалить",
  deleteBody: (name: string) =>
    `Удалить бота ${name}? Его маршруты и история сообщений удаляются вместе с ним. В Telegram бот останется.`
})

/** How often the Bots page reads the bots again: their status and last error change on their own. */
const statusRefresh = 5_000

/** What to call a bot: its name, else its @username, else its id. */
export const botLabel = (bot: Bot) => bot.name || (bot.username ? "@" + bot.username : "#" + bot.id)

/** A bot's name by id, for tables of other things (routes, deliveries). */
export const botLabelById = (bots: ReadonlyArray<Bot> | undefined, id: number) => {
  const bot = bots?.find((b) => b.id === id)
  return bot === undefined ? "#" + id : botLabel(bot)
}

/**
 * A heading to take the focus when the control that had it goes away (its row was deleted): `ref` goes
 * on the page's `<h1 tabIndex={-1}>`; `removed()` after a deletion succeeds. Once the focus has fallen
 * to the body (the dialog closed onto a removed button, or the row went after it closed), the heading
 * takes it.
 */
export const useFocusFallback = () => {
  const ref = useRef<HTMLHeadingElement>(null)
  const pending = useRef(false)
  useEffect(() => {
    if (!pending.current) return
    const active = document.activeElement
    if (active === null || active === document.body || !active.isConnected) {
      pending.current = false
      ref.current?.focus()
    }
  })
  return {
    ref,
    removed: () => {
      pending.current = true
    }
  }
}

const botFields = ["token", "name", "backend_url", "manage_enabled", "proxy_enabled", "long_poll_enabled"] as const
type BotField = typeof botFields[number]

/** The form of `Add bot` and `Edit bot`; on `Edit`, a blank `Token` keeps the bot's token. */
const BotForm = ({ bot, onDone }: { readonly bot: Bot | undefined; readonly onDone: () => void }) => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const [token, setToken] = useState("")
  const [name, setName] = useState(bot?.name ?? "")
  const [backendUrl, setBackendUrl] = useState(bot?.backend_url ?? "")
  const [manage, setManage] = useState(bot?.manage_enabled ?? false)
  const [proxy, setProxy] = useState(bot?.proxy_enabled ?? false)
  const [longPoll, setLongPoll] = useState(bot?.long_poll_enabled ?? false)
  const save = useMutation({
    mutationFn: () => {
      if (bot === undefined) {
        const body: Schemas["NewBot"] = {
          token,
          name,
          backend_url: backendUrl,
          manage_enabled: manage,
          proxy_enabled: proxy,
          long_poll_enabled: longPoll
        }
        return unwrap(api.POST("/api/bots/add", { body }))
      }
      // A partial update: only what changed, so an untouched URL keeps who set it (`backend_url_origin`).
      const body: Schemas["BotUpdate"] = { id: bot.id }
      if (token !== "") body.token = token
      if (name !== bot.name) body.name = name
      if (backendUrl !== bot.backend_url) body.backend_url = backendUrl
      if (manage !== bot.manage_enabled) body.manage_enabled = manage
      if (proxy !== bot.proxy_enabled) body.proxy_enabled = proxy
      if (longPoll !== bot.long_poll_enabled) body.long_poll_enabled = longPoll
      return unwrap(api.POST("/api/bots/update", { body }))
    },
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: botsKey })
      onDone()
    }
  })
  const error = save.error instanceof ApiFailure && save.error.code === "duplicate_token"
    ? new ApiFailure(save.error.status, save.error.code, save.error.message, [{ path: "token", message: save.error.message }])
    : save.error
  const { byField, rest } = fieldErrors<BotField>(error, botFields)
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <TextField
        label={texts.token}
        type="password"
        autoComplete="off"
        spellCheck={false}
        value={token}
        onChange={(e) => setToken(e.target.value)}
        error={byField.token}
        hint={bot === undefined ? undefined : texts.tokenKeep}
        autoFocus
      />
      <TextField label={texts.name} value={name} onChange={(e) => setName(e.target.value)} error={byField.name} />
      <TextField
        label={texts.backendUrl}
        type="url"
        inputMode="url"
        spellCheck={false}
        value={backendUrl}
        onChange={(e) => setBackendUrl(e.target.value)}
        error={byField.backend_url}
        hint={texts.backendUrlHint}
      />
      <CheckboxField
        label={texts.manage}
        checked={manage}
        onChange={(e) => setManage(e.target.checked)}
        error={byField.manage_enabled}
      />
      <CheckboxField label={texts.proxy} checked={proxy} onChange={(e) => setProxy(e.target.checked)} error={byField.proxy_enabled} />
      <CheckboxField
        label={texts.longPolling}
        checked={longPoll}
        onChange={(e) => setLongPoll(e.target.checked)}
        error={byField.long_poll_enabled}
      />
      <ErrorAlert error={rest} />
      <div className="dialog-actions">
        <button type="submit" className="primary" disabled={save.isPending}>{common.save}</button>
        <button type="button" onClick={onDone}>{common.cancel}</button>
      </div>
    </form>
  )
}

const Status = ({ bot }: { readonly bot: Bot }) => {
  const texts = useTexts()
  const state = bot.disabled ? texts.disabled : bot.running ? texts.running : texts.stopped
  return (
    <>
      <span className={"bot-status bot-status-" + (bot.disabled ? "disabled" : bot.running ? "running" : "stopped")}>
        {state}
      </span>
      {bot.last_error === "" ? null : <span className="bot-error">{texts.lastError(bot.last_error)}</span>}
    </>
  )
}

const BotRow = ({ bot, admin, onEdit, onDelete }: {
  readonly bot: Bot
  readonly admin: boolean
  readonly onEdit: (bot: Bot) => void
  readonly onDelete: (bot: Bot) => void
}) => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const toggle = useMutation({
    mutationFn: () => unwrap(api.POST("/api/bots/toggle-disabled", { params: { query: { id: String(bot.id) } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: botsKey })
  })
  const flags = [
    bot.manage_enabled ? texts.manage : undefined,
    bot.proxy_enabled ? texts.proxy : undefined,
    bot.long_poll_enabled ? texts.longPolling : undefined
  ].filter((f) => f !== undefined)
  return (
    <tr>
      <th scope="row">{botLabel(bot)}</th>
      <td>{bot.username ? "@" + bot.username : <span className="muted">{common.none}</span>}</td>
      <td><Status bot={bot} /></td>
      <td>{bot.webhook_mode ? texts.webhook : texts.polling}</td>
      <td>{flags.length === 0 ? <span className="muted">{common.none}</span> : flags.join(", ")}</td>
      {admin
        ? (
          <td className="actions">
            <button type="button" onClick={() => onEdit(bot)}>{common.edit}</button>
            <button type="button" onClick={() => toggle.mutate()} disabled={toggle.isPending}>
              {bot.disabled ? common.enable : common.disable}
            </button>
            <button type="button" onClick={() => onDelete(bot)}>{common.delete}</button>
            <ErrorAlert error={toggle.error} />
          </td>
        )
        : null}
    </tr>
  )
}

/** `/bots`: table `Bots`; admins add (`Add bot`), edit, toggle and delete bots. */
export const BotsPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const admin = isAdmin(useAccount())
  const client = useQueryClient()
  const bots = useBots(statusRefresh)
  const [adding, setAdding] = useState(false)
  const [editing, setEditing] = useState<Bot | undefined>(undefined)
  const [deleting, setDeleting] = useState<Bot | undefined>(undefined)
  const focus = useFocusFallback()
  return (
    <>
      <div className="page-header">
        <h1 ref={focus.ref} tabIndex={-1}>{texts.title}</h1>
        {admin ? <button type="button" className="primary" onClick={() => setAdding(true)}>{texts.addBot}</button> : null}
      </div>
      <ErrorAlert error={bots.error} />
      <div className="table-wrap">
        <table aria-label={texts.table} className="bots-table">
          <thead>
            <tr>
              <th scope="col">{texts.name}</th>
              <th scope="col">{texts.username}</th>
              <th scope="col">{texts.status}</th>
              <th scope="col">{texts.mode}</th>
              <th scope="col">{texts.flags}</th>
              {admin ? <th scope="col"><span className="visually-hidden">{texts.actions}</span></th> : null}
            </tr>
          </thead>
          <tbody>
            {(bots.data ?? []).map((bot) => (
              <BotRow key={bot.id} bot={bot} admin={admin} onEdit={setEditing} onDelete={setDeleting} />
            ))}
          </tbody>
        </table>
      </div>
      {bots.isPending ? <p className="muted">{common.loading}</p> : null}
      {bots.data?.length === 0 ? <p className="muted">{texts.empty}</p> : null}
      {admin
        ? (
          <>
            <Dialog title={texts.addBot} open={adding} onClose={() => setAdding(false)}>
              <BotForm bot={undefined} onDone={() => setAdding(false)} />
            </Dialog>
            <Dialog title={texts.editBot} open={editing !== undefined} onClose={() => setEditing(undefined)}>
              {editing === undefined ? null : <BotForm key={editing.id} bot={editing} onDone={() => setEditing(undefined)} />}
            </Dialog>
            <Confirm
              title={texts.deleteBot}
              action={texts.deleteBot}
              {...(deleting === undefined ? {} : { body: texts.deleteBody(botLabel(deleting)) })}
              open={deleting !== undefined}
              onClose={() => setDeleting(undefined)}
              onConfirm={async () => {
                if (deleting === undefined) return
                await unwrap(api.POST("/api/bots/delete", { params: { query: { id: String(deleting.id) } } }))
                focus.removed()
                await client.invalidateQueries({ queryKey: botsKey })
              }}
            />
          </>
        )
        : null}
    </>
  )
}
