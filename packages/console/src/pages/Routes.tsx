import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { api, type Route, type Schemas, unwrap } from "../api/client"
import { defineTexts } from "../i18n"
import { useCommonTexts } from "../texts"
import { ErrorAlert, fieldErrors } from "../ui/Alert"
import { Confirm } from "../ui/Confirm"
import { Dialog } from "../ui/Dialog"
import { CheckboxField, SelectField, TextAreaField, TextField } from "../ui/Field"
import { useBots } from "../ui/bots"
import { botLabel, botLabelById, useFocusFallback } from "./Bots"

type Condition = Route["condition_type"]
type Action = Route["action"]

const conditions: ReadonlyArray<Condition> = ["all", "chat_id", "user_id", "keyword", "regex", "llm"]
const actions: ReadonlyArray<Action> = ["forward", "copy", "drop"]

const useTexts = defineTexts({
  title: "Routes",
  table: "Routes",
  addRoute: "Add route",
  editRoute: "Edit route",
  sourceBot: "Source bot",
  targetBot: "Target bot",
  condition: "Condition",
  value: "Value",
  action: "Action",
  targetChat: "Target chat",
  targetChatHint: "A chat id; empty or 0 sends to the chat the message came from.",
  sourceChat: "source chat",
  description: "Description",
  enabled: "Enabled",
  actions: "Actions",
  empty: "No routes yet.",
  deleteRoute: "Delete",
  deleteBody: (id: number) => `Delete route ${id}? Messages stop following it at once.`,
  valueHint: (condition: Condition) => ({
    all: "Not used: every message matches.",
    chat_id: "One or more chat ids, separated by commas.",
    user_id: "One or more user ids, separated by commas.",
    keyword: "One or more keywords or phrases, separated by commas; whole words, any case.",
    regex: "An RE2 regular expression matched against the text or caption.",
    llm: "A hint for the model on which messages this route is for (may be empty)."
  })[condition]
}, {
  title: "Маршруты",
  table: "Маршруты",
  addRoute: "Добавить маршрут",
  editRoute: "Изменить маршрут",
  sourceBot: "Бот-источник",
  targetBot: "Бот-получатель",
  condition: "Условие",
  value: "Значение",
  action: "Действие",
  targetChat: "Чат назначения",
  targetChatHint: "Id чата; пусто или 0 — отправить в тот чат, откуда пришло сообщение.",
  sourceChat: "исходный чат",
  description: "Описание",
  enabled: "Включён",
  actions: "Действия",
  empty: "Маршрутов пока нет.",
  deleteRoute: "Удалить",
  deleteBody: (id: number) => `Удалить маршрут ${id}? Сообщения сразу перестанут по нему идти.`,
  valueHint: (condition: Condition) => ({
    all: "Не используется: подходит любое сообщение.",
    chat_id: "Один или несколько id чатов через запятую.",
    user_id: "Один или несколько id пользователей через запятую.",
    keyword: "Одно или несколько слов или фраз через запятую; целые слова, регистр не важен.",
    regex: "Регулярное выражение RE2, проверяется по тексту или подписи.",
    llm: "Подсказка модели, для каких сообщений этот маршрут (можно оставить пустой)."
  })[condition]
})

const routesKey = ["routes"] as const

/** The API's field names, each shown at its input. */
const routeFields = [
  "source_bot_id",
  "target_bot_id",
  "condition_type",
  "condition_value",
  "action",
  "target_chat_id",
  "description",
  "enabled"
] as const
type RouteField = typeof routeFields[number]

/** The form of `Add route` and `Edit route` (an update replaces the whole route). */
const RouteForm = ({ route, onDone }: { readonly route: Route | undefined; readonly onDone: () => void }) => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const bots = useBots()
  const firstBot = bots.data?.[0]?.id
  const [chosenSource, setSource] = useState(route?.source_bot_id)
  const [chosenTarget, setTarget] = useState(route?.target_bot_id)
  // Until one is chosen, the selects show (and the form sends) the first bot.
  const source = chosenSource ?? firstBot
  const target = chosenTarget ?? firstBot
  const [condition, setCondition] = useState<Condition>(route?.condition_type ?? "all")
  const [value, setValue] = useState(route?.condition_value ?? "")
  const [action, setAction] = useState<Action>(route?.action ?? "forward")
  const [targetChat, setTargetChat] = useState(route === undefined || route.target_chat_id === 0 ? "" : String(route.target_chat_id))
  const [description, setDescription] = useState(route?.description ?? "")
  const [enabled, setEnabled] = useState(route?.enabled ?? true)
  const save = useMutation({
    mutationFn: () => {
      const body: Schemas["NewRoute"] = {
        // No bot, or a target chat that is no number: the API names the field and says why.
        source_bot_id: source ?? 0,
        target_bot_id: target ?? 0,
        condition_type: condition,
        condition_value: value,
        action,
        target_chat_id: targetChat.trim() === "" ? 0 : Number(targetChat.trim()),
        description,
        enabled
      }
      return route === undefined
        ? unwrap(api.POST("/api/routes/add", { body }))
        : unwrap(api.POST("/api/routes/update", { body: { ...body, id: route.id } }))
    },
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: routesKey })
      onDone()
    }
  })
  const { byField, rest } = fieldErrors<RouteField>(save.error, routeFields)
  const botOptions = (bots.data ?? []).map((bot) => <option key={bot.id} value={bot.id}>{botLabel(bot)}</option>)
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <SelectField
        label={texts.sourceBot}
        value={source ?? ""}
        onChange={(e) => setSource(Number(e.target.value))}
        error={byField.source_bot_id}
        autoFocus
      >
        {botOptions}
      </SelectField>
      <SelectField
        label={texts.targetBot}
        value={target ?? ""}
        onChange={(e) => setTarget(Number(e.target.value))}
        error={byField.target_bot_id}
      >
        {botOptions}
      </SelectField>
      <SelectField
        label={texts.condition}
        value={condition}
        onChange={(e) => setCondition(e.target.value as Condition)}
        error={byField.condition_type}
      >
        {conditions.map((c) => <option key={c} value={c}>{c}</option>)}
      </SelectField>
      <TextField
        label={texts.value}
        value={value}
        spellCheck={false}
        onChange={(e) => setValue(e.target.value)}
        error={byField.condition_value}
        hint={texts.valueHint(condition)}
      />
      <SelectField
        label={texts.action}
        value={action}
        onChange={(e) => setAction(e.target.value as Action)}
        error={byField.action}
      >
        {actions.map((a) => <option key={a} value={a}>{a}</option>)}
      </SelectField>
      <TextField
        label={texts.targetChat}
        inputMode="numeric"
        value={targetChat}
        onChange={(e) => setTargetChat(e.target.value)}
        error={byField.target_chat_id}
        hint={texts.targetChatHint}
      />
      <TextAreaField
        label={texts.description}
        rows={2}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
        error={byField.description}
      />
      <CheckboxField label={texts.enabled} checked={enabled} onChange={(e) => setEnabled(e.target.checked)} error={byField.enabled} />
      <ErrorAlert error={rest} />
      <div className="dialog-actions">
        <button type="submit" className="primary" disabled={save.isPending}>{common.save}</button>
        <button type="button" onClick={onDone}>{common.cancel}</button>
      </div>
    </form>
  )
}

/** `/routes` (admins): table `Routes`; `Add route`, and `Edit` / `Delete` per row. */
export const RoutesPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const bots = useBots()
  const routes = useQuery({ queryKey: routesKey, queryFn: () => unwrap(api.GET("/api/routes")) })
  const [adding, setAdding] = useState(false)
  const [editing, setEditing] = useState<Route | undefined>(undefined)
  const [deleting, setDeleting] = useState<Route | undefined>(undefined)
  const focus = useFocusFallback()
  return (
    <>
      <div className="page-header">
        <h1 ref={focus.ref} tabIndex={-1}>{texts.title}</h1>
        <button type="button" className="primary" onClick={() => setAdding(true)}>{texts.addRoute}</button>
      </div>
      <ErrorAlert error={routes.error ?? bots.error} />
      <div className="table-wrap">
        <table aria-label={texts.table}>
          <thead>
            <tr>
              <th scope="col">{texts.sourceBot}</th>
              <th scope="col">{texts.targetBot}</th>
              <th scope="col">{texts.condition}</th>
              <th scope="col">{texts.value}</th>
              <th scope="col">{texts.action}</th>
              <th scope="col">{texts.targetChat}</th>
              <th scope="col">{texts.description}</th>
              <th scope="col">{texts.enabled}</th>
              <th scope="col"><span className="visually-hidden">{texts.actions}</span></th>
            </tr>
          </thead>
          <tbody>
            {(routes.data ?? []).map((route) => (
              <tr key={route.id}>
                <td>{botLabelById(bots.data, route.source_bot_id)}</td>
                <td>{botLabelById(bots.data, route.target_bot_id)}</td>
                <td><code>{route.condition_type}</code></td>
                <td className="route-value">{route.condition_value === "" ? null : <code>{route.condition_value}</code>}</td>
                <td><code>{route.action}</code></td>
                <td>{route.target_chat_id === 0 ? <span className="muted">{texts.sourceChat}</span> : route.target_chat_id}</td>
                <td className="route-description">{route.description}</td>
                <td>{route.enabled ? common.yes : common.no}</td>
                <td className="actions">
                  <button type="button" onClick={() => setEditing(route)}>{common.edit}</button>
                  <button type="button" onClick={() => setDeleting(route)}>{common.delete}</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {routes.isPending ? <p className="muted">{common.loading}</p> : null}
      {routes.data?.length === 0 ? <p className="muted">{texts.empty}</p> : null}
      <Dialog title={texts.addRoute} open={adding} onClose={() => setAdding(false)}>
        <RouteForm route={undefined} onDone={() => setAdding(false)} />
      </Dialog>
      <Dialog title={texts.editRoute} open={editing !== undefined} onClose={() => setEditing(undefined)}>
        {editing === undefined ? null : <RouteForm key={editing.id} route={editing} onDone={() => setEditing(undefined)} />}
      </Dialog>
      <Confirm
        title={texts.deleteRoute}
        action={texts.deleteRoute}
        {...(deleting === undefined ? {} : { body: texts.deleteBody(deleting.id) })}
        open={deleting !== undefined}
        onClose={() => setDeleting(undefined)}
        onConfirm={async () => {
          if (deleting === undefined) return
          await unwrap(api.POST("/api/routes/delete", { params: { query: { id: String(deleting.id) } } }))
          focus.removed()
          await client.invalidateQueries({ queryKey: routesKey })
        }}
      />
    </>
  )
}
