import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { api, type ApiKey, type Schemas, unwrap } from "../api/client"
import { defineTexts, useFormatTime } from "../i18n"
import { useCommonTexts } from "../texts"
import { ErrorAlert, fieldErrors } from "../ui/Alert"
import { useBotNames } from "../ui/bots"
import { Confirm } from "../ui/Confirm"
import { Dialog } from "../ui/Dialog"
import { SelectField, TextField } from "../ui/Field"
import { type ScopeEntry, ScopePicker } from "../ui/ScopePicker"

const useTexts = defineTexts({
  title: "API keys",
  table: "Keys",
  createKey: "Create key",
  name: "Name",
  role: "Role",
  bots: "Bots",
  prefix: "Key",
  enabled: "Enabled",
  created: "Created",
  lastUsed: "Last used",
  actions: "Actions",
  never: "never",
  empty: "There are no keys.",
  create: "Create",
  creating: "Creating…",
  newKey: "New key",
  secret: "Secret",
  secretNote: "Copy the key now: it is shown only this once. Programs send it as “Authorization: Bearer <key>”.",
  copy: "Copy",
  copied: "Copied",
  copyFailed: "The browser did not allow copying; select the key and copy it.",
  done: "Done",
  deleteBody: (name: string) => `Delete the key “${name}”? Programs that use it will be refused.`,
  editScope: "Edit scope",
  editKey: (name: string) => `Scope of “${name}”`,
  intro: "Keys let programs and scripts use the API. People sign in with accounts."
}, {
  title: "Ключи API",
  table: "Ключи",
  createKey: "Создать ключ",
  name: "Название",
  role: "Роль",
  bots: "Боты",
  prefix: "Ключ",
  enabled: "Включён",
  created: "Создан",
  lastUsed: "Использован",
  actions: "Действия",
  never: "никогда",
  empty: "Ключей нет.",
  create: "Создать",
  creating: "Создание…",
  newKey: "Новый ключ",
  secret: "Секрет",
  secretNote: "Скопируйте ключ сейчас: он показывается только один раз. Программы передают его как «Authorization: Bearer <ключ>».",
  copy: "Копировать",
  copied: "Скопировано",
  copyFailed: "Браузер не разрешил копирование; выделите ключ и скопируйте его.",
  done: "Готово",
  deleteBody: (name: string) => `Удалить ключ «${name}»? Программам, которые им пользуются, будет отказано.`,
  editScope: "Изменить доступ",
  editKey: (name: string) => `Доступ ключа «${name}»`,
  intro: "Ключи дают программам и скриптам доступ к API. Люди входят по учётным записям."
})

const keysKey = ["api-keys"] as const

type Role = ApiKey["role"]

/** `Create key`: `Name`, `Role`, `Bots`, `Create`; hands the created key (with its secret) to `onCreated`. */
const CreateKeyDialog = ({ open, onClose, onCreated }: {
  readonly open: boolean
  readonly onClose: () => void
  readonly onCreated: (key: Schemas["CreatedApiKey"]) => void
}) => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const [name, setName] = useState("")
  const [role, setRole] = useState<Role>("operator")
  const [scopes, setScopes] = useState<ReadonlyArray<ScopeEntry>>([])
  const create = useMutation({
    // the answer holds the secret: keep it no longer than the dialogs need it
    gcTime: 0,
    mutationFn: () =>
      unwrap(api.POST("/api/auth/api-keys", {
        body: role === "operator" ? { name, role, scopes: [...scopes] } : { name, role }
      })),
    onSuccess: () => void client.invalidateQueries({ queryKey: keysKey })
  })
  const close = () => {
    setName("")
    setRole("operator")
    setScopes([])
    create.reset()
    onClose()
  }
  const { byField, rest } = fieldErrors(create.error, ["name", "role", "bot_ids", "scopes"])
  return (
    <Dialog title={texts.createKey} open={open} onClose={close}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          create.mutate(undefined, {
            onSuccess: (key) => {
              close()
              onCreated(key)
            }
          })
        }}
      >
        <TextField
          label={texts.name}
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={byField.name}
          autoFocus
          autoComplete="off"
        />
        <SelectField label={texts.role} value={role} onChange={(e) => setRole(e.target.value as Role)} error={byField.role}>
          <option value="operator">{common.operator}</option>
          <option value="admin">{common.admin}</option>
        </SelectField>
        <ScopePicker role={role} value={scopes} onChange={setScopes} error={byField.scopes ?? byField.bot_ids} />
        <ErrorAlert error={rest} />
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            {create.isPending ? texts.creating : texts.create}
          </button>
          <button type="button" onClick={close}>{common.cancel}</button>
        </div>
      </form>
    </Dialog>
  )
}

/** `Scope of “<name>”`: an operator key's `Bots` with their chats and abilities, `Save`. */
const EditScopeDialog = ({ apiKey, onClose }: { readonly apiKey: ApiKey; readonly onClose: () => void }) => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const [scopes, setScopes] = useState<ReadonlyArray<ScopeEntry>>(apiKey.scopes)
  const save = useMutation({
    mutationFn: () => unwrap(api.POST("/api/auth/api-keys/update", { body: { id: apiKey.id, scopes: [...scopes] } })),
    onSettled: () => void client.invalidateQueries({ queryKey: keysKey })
  })
  const { byField, rest } = fieldErrors(save.error, ["bot_ids", "scopes"])
  return (
    <Dialog title={texts.editKey(apiKey.name)} open onClose={onClose}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          save.mutate(undefined, { onSuccess: onClose })
        }}
      >
        <ScopePicker role="operator" value={scopes} onChange={setScopes} error={byField.scopes ?? byField.bot_ids} />
        <ErrorAlert error={rest} />
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={save.isPending}>{common.save}</button>
          <button type="button" onClick={onClose}>{common.cancel}</button>
        </div>
      </form>
    </Dialog>
  )
}

/** `New key`: the secret, once, in a read-only `Secret` textbox with `Copy` and `Done`. */
const NewKeyDialog = ({ secret, onDone }: { readonly secret: string | undefined; readonly onDone: () => void }) => {
  const texts = useTexts()
  const [copied, setCopied] = useState<"no" | "yes" | "failed">("no")
  const done = () => {
    setCopied("no")
    onDone()
  }
  return (
    <Dialog title={texts.newKey} open={secret !== undefined} onClose={done}>
      <p>{texts.secretNote}</p>
      <div className="field">
        <label htmlFor="new-key-secret">{texts.secret}</label>
        <input
          id="new-key-secret"
          className="secret"
          readOnly
          value={secret ?? ""}
          onFocus={(e) => e.target.select()}
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <p role="status" className={copied === "failed" ? "field-error" : "muted"}>
        {copied === "yes" ? texts.copied : copied === "failed" ? texts.copyFailed : ""}
      </p>
      <div className="dialog-actions">
        <button
          type="button"
          onClick={() => {
            if (secret === undefined) return
            const clipboard = window.isSecureContext ? navigator.clipboard : undefined
            if (clipboard === undefined) {
              setCopied("failed")
              return
            }
            clipboard.writeText(secret).then(() => setCopied("yes"), () => setCopied("failed"))
          }}
        >
          {texts.copy}
        </button>
        <button type="button" className="primary" onClick={done} autoFocus>{texts.done}</button>
      </div>
    </Dialog>
  )
}

/** `/keys`: table `Keys`, `Create key` (the secret shown once), `Disable`/`Enable`, `Delete`. */
export const KeysPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const formatTime = useFormatTime()
  const botNames = useBotNames()
  const client = useQueryClient()
  const keys = useQuery({ queryKey: keysKey, queryFn: () => unwrap(api.GET("/api/auth/api-keys")) })
  const [creating, setCreating] = useState(false)
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [deleting, setDeleting] = useState<ApiKey | undefined>(undefined)
  const [editing, setEditing] = useState<ApiKey | undefined>(undefined)
  const toggle = useMutation({
    mutationFn: (id: number) => unwrap(api.POST("/api/auth/api-keys/toggle", { params: { query: { id: String(id) } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: keysKey })
  })
  const remove = useMutation({
    mutationFn: (id: number) => unwrap(api.POST("/api/auth/api-keys/delete", { params: { query: { id: String(id) } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: keysKey })
  })
  return (
    <>
      <div className="page-header">
        <h1>{texts.title}</h1>
        <button type="button" className="primary" onClick={() => setCreating(true)}>{texts.createKey}</button>
      </div>
      <p className="muted">{texts.intro}</p>
      <ErrorAlert error={keys.error ?? toggle.error ?? undefined} />
      <div className="table-wrap">
        <table aria-label={texts.table}>
          <thead>
            <tr>
              <th scope="col">{texts.name}</th>
              <th scope="col">{texts.prefix}</th>
              <th scope="col">{texts.role}</th>
              <th scope="col">{texts.bots}</th>
              <th scope="col">{texts.enabled}</th>
              <th scope="col">{texts.created}</th>
              <th scope="col">{texts.lastUsed}</th>
              <th scope="col">{texts.actions}</th>
            </tr>
          </thead>
          <tbody>
            {keys.isPending
              ? (
                <tr>
                  <td colSpan={8}>{common.loading}</td>
                </tr>
              )
              : (keys.data ?? []).length === 0
              ? (
                <tr>
                  <td colSpan={8}>{texts.empty}</td>
                </tr>
              )
              : (keys.data ?? []).map((key) => (
                <tr key={key.id}>
                  <th scope="row">{key.name}</th>
                  <td><code>{key.prefix}…</code></td>
                  <td>{key.role === "admin" ? common.admin : common.operator}</td>
                  <td>{botNames(key.role, key.bot_ids)}</td>
                  <td>{key.enabled ? common.yes : common.no}</td>
                  <td>{key.created_at === "" ? "" : formatTime(key.created_at)}</td>
                  <td>{key.last_used_at === "" ? texts.never : formatTime(key.last_used_at)}</td>
                  <td className="actions">
                    <button
                      type="button"
                      disabled={toggle.isPending && toggle.variables === key.id}
                      onClick={() => toggle.mutate(key.id)}
                    >
                      {key.enabled ? common.disable : common.enable}
                    </button>
                    {key.role === "operator"
                      ? <button type="button" onClick={() => setEditing(key)}>{texts.editScope}</button>
                      : null}
                    <button type="button" onClick={() => setDeleting(key)}>{common.delete}</button>
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
      <CreateKeyDialog open={creating} onClose={() => setCreating(false)} onCreated={(key) => setSecret(key.key)} />
      <NewKeyDialog secret={secret} onDone={() => setSecret(undefined)} />
      {editing === undefined ? null : <EditScopeDialog apiKey={editing} onClose={() => setEditing(undefined)} />}
      <Confirm
        title={common.delete}
        action={common.delete}
        {...(deleting === undefined ? {} : { body: texts.deleteBody(deleting.name) })}
        open={deleting !== undefined}
        onClose={() => setDeleting(undefined)}
        onConfirm={() => deleting === undefined ? Promise.resolve() : remove.mutateAsync(deleting.id)}
      />
    </>
  )
}
