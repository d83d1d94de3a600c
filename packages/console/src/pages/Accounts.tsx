import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { type Account, api, type Schemas, unwrap } from "../api/client"
import { defineTexts, useFormatTime } from "../i18n"
import { sessionKey, useAccount } from "../session"
import { useCommonTexts } from "../texts"
import { ErrorAlert, fieldErrors } from "../ui/Alert"
import { useBotNames } from "../ui/bots"
import { type ScopeEntry, ScopePicker, sameScopes } from "../ui/ScopePicker"
import { Confirm } from "../ui/Confirm"
import { Dialog } from "../ui/Dialog"
import { CheckboxField, SelectField, TextField } from "../ui/Field"

const useTexts = defineTexts({
  title: "Accounts",
  table: "Accounts",
  createAccount: "Create account",
  editAccount: "Edit account",
  username: "Username",
  displayName: "Display name",
  password: "Password",
  passwordHint: "At least 10 characters.",
  newPassword: "New password",
  newPasswordHint: "Leave blank to keep the password. A new one signs the account out everywhere.",
  currentPassword: "Current password",
  currentPasswordHint: "Needed to change your own password.",
  role: "Role",
  bots: "Bots",
  enabled: "Enabled",
  lastSignIn: "Last sign-in",
  actions: "Actions",
  never: "never",
  you: "(you)",
  empty: "There are no accounts.",
  intro: "People sign in to the console with accounts. Programs use API keys.",
  deleteBody: (name: string) => `Delete the account “${name}”? Its sessions end at once.`
}, {
  title: "Учётные записи",
  table: "Учётные записи",
  createAccount: "Создать учётную запись",
  editAccount: "Изменить учётную запись",
  username: "Имя пользователя",
  displayName: "Отображаемое имя",
  password: "Пароль",
  passwordHint: "Не короче 10 символов.",
  newPassword: "Новый пароль",
  newPasswordHint: "Оставьте пустым, чтобы не менять. Новый пароль завершает все сеансы учётной записи.",
  currentPassword: "Текущий пароль",
  currentPasswordHint: "Нужен, чтобы сменить собственный пароль.",
  role: "Роль",
  bots: "Боты",
  enabled: "Включена",
  lastSignIn: "Последний вход",
  actions: "Действия",
  never: "никогда",
  you: "(вы)",
  empty: "Учётных записей нет.",
  intro: "Люди входят в консоль по учётным записям. Программы пользуются ключами API.",
  deleteBody: (name: string) => `Удалить учётную запись «${name}»? Её сеансы сразу завершатся.`
})

const accountsKey = ["accounts"] as const

type Role = Account["role"]

const RoleSelect = ({ value, onChange, error }: {
  readonly value: Role
  readonly onChange: (role: Role) => void
  readonly error: string | undefined
}) => {
  const texts = useTexts()
  const common = useCommonTexts()
  return (
    <SelectField label={texts.role} value={value} onChange={(e) => onChange(e.target.value as Role)} error={error}>
      <option value="operator">{common.operator}</option>
      <option value="admin">{common.admin}</option>
    </SelectField>
  )
}

/** `Create account`: `Username`, `Display name`, `Password`, `Role`, `Bots`, `Save`. */
const CreateAccountDialog = ({ open, onClose }: { readonly open: boolean; readonly onClose: () => void }) => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const [username, setUsername] = useState("")
  const [displayName, setDisplayName] = useState("")
  const [password, setPassword] = useState("")
  const [role, setRole] = useState<Role>("operator")
  const [scopes, setScopes] = useState<ReadonlyArray<ScopeEntry>>([])
  const create = useMutation({
    gcTime: 0,
    mutationFn: () => {
      const body: Schemas["NewAccount"] = { username, password, display_name: displayName, role }
      return unwrap(api.POST("/api/accounts", { body: role === "operator" ? { ...body, scopes: [...scopes] } : body }))
    },
    onSuccess: () => void client.invalidateQueries({ queryKey: accountsKey })
  })
  const close = () => {
    setUsername("")
    setDisplayName("")
    setPassword("")
    setRole("operator")
    setScopes([])
    create.reset()
    onClose()
  }
  const { byField, rest } = fieldErrors(create.error, ["username", "display_name", "password", "role", "bot_ids", "scopes"])
  return (
    <Dialog title={texts.createAccount} open={open} onClose={close}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          create.mutate(undefined, { onSuccess: close })
        }}
      >
        <TextField
          label={texts.username}
          value={username}
          onChange={(e) => setUsername(e.target.value)}
          error={byField.username}
          autoComplete="off"
          autoFocus
        />
        <TextField
          label={texts.displayName}
          value={displayName}
          onChange={(e) => setDisplayName(e.target.value)}
          error={byField.display_name}
          autoComplete="off"
        />
        <TextField
          label={texts.password}
          type="password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={byField.password}
          hint={texts.passwordHint}
          autoComplete="new-password"
        />
        <RoleSelect value={role} onChange={setRole} error={byField.role} />
        <ScopePicker role={role} value={scopes} onChange={setScopes} error={byField.scopes ?? byField.bot_ids} />
        <ErrorAlert error={rest} />
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={create.isPending}>{common.save}</button>
          <button type="button" onClick={close}>{common.cancel}</button>
        </div>
      </form>
    </Dialog>
  )
}

/**
 * `Edit account`: `Display name`, `Role`, `Bots`, `Enabled`, and `New password` (an admin's reset; one's own
 * change also asks for `Current password`). Only what changed is sent.
 */
const EditAccountForm = ({ account, onClose }: { readonly account: Account; readonly onClose: () => void }) => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const me = useAccount()
  const own = me.id === account.id
  const [displayName, setDisplayName] = useState(account.display_name)
  const [role, setRole] = useState<Role>(account.role)
  const [scopes, setScopes] = useState<ReadonlyArray<ScopeEntry>>(account.scopes)
  const [enabled, setEnabled] = useState(account.enabled)
  const [newPassword, setNewPassword] = useState("")
  const [oldPassword, setOldPassword] = useState("")
  const save = useMutation({
    gcTime: 0,
    mutationFn: async () => {
      if (newPassword !== "") {
        await unwrap(api.POST("/api/accounts/password", {
          body: own
            ? { id: account.id, old_password: oldPassword, new_password: newPassword }
            : { id: account.id, new_password: newPassword }
        }))
      }
      const changes: Schemas["AccountUpdate"] = {
        id: account.id,
        ...(displayName === account.display_name ? {} : { display_name: displayName }),
        ...(role === account.role ? {} : { role }),
        ...(role === "operator" && (role !== account.role || !sameScopes(scopes, account.scopes))
          ? { scopes: [...scopes] }
          : {}),
        ...(enabled === account.enabled ? {} : { enabled })
      }
      if (Object.keys(changes).length > 1) await unwrap(api.POST("/api/accounts/update", { body: changes }))
    },
    onSettled: () => {
      void client.invalidateQueries({ queryKey: accountsKey })
      if (own) void client.invalidateQueries({ queryKey: sessionKey })
    }
  })
  const { byField, rest } = fieldErrors(save.error, [
    "display_name",
    "role",
    "bot_ids",
    "scopes",
    "enabled",
    "new_password",
    "old_password"
  ])
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate(undefined, { onSuccess: onClose })
      }}
    >
      <p>
        <strong>{texts.username}:</strong> {account.username}
      </p>
      <TextField
        label={texts.displayName}
        value={displayName}
        onChange={(e) => setDisplayName(e.target.value)}
        error={byField.display_name}
        autoComplete="off"
        autoFocus
      />
      <RoleSelect value={role} onChange={setRole} error={byField.role} />
      <ScopePicker role={role} value={scopes} onChange={setScopes} error={byField.scopes ?? byField.bot_ids} />
      <CheckboxField
        label={texts.enabled}
        checked={enabled}
        onChange={(e) => setEnabled(e.target.checked)}
        error={byField.enabled}
      />
      <TextField
        label={texts.newPassword}
        type="password"
        value={newPassword}
        onChange={(e) => setNewPassword(e.target.value)}
        error={byField.new_password}
        hint={texts.newPasswordHint}
        autoComplete="new-password"
      />
      {own
        ? (
          <TextField
            label={texts.currentPassword}
            type="password"
            value={oldPassword}
            onChange={(e) => setOldPassword(e.target.value)}
            error={byField.old_password}
            hint={texts.currentPasswordHint}
            autoComplete="current-password"
          />
        )
        : null}
      <ErrorAlert error={rest} />
      <div className="dialog-actions">
        <button type="submit" className="primary" disabled={save.isPending}>{common.save}</button>
        <button type="button" onClick={onClose}>{common.cancel}</button>
      </div>
    </form>
  )
}

/** `/accounts`: table `Accounts`, `Create account`, a row's `Edit` and `Delete`. */
export const AccountsPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const formatTime = useFormatTime()
  const botNames = useBotNames()
  const me = useAccount()
  const client = useQueryClient()
  const accounts = useQuery({ queryKey: accountsKey, queryFn: () => unwrap(api.GET("/api/accounts")) })
  const [creating, setCreating] = useState(false)
  const [editing, setEditing] = useState<Account | undefined>(undefined)
  const [deleting, setDeleting] = useState<Account | undefined>(undefined)
  const remove = useMutation({
    mutationFn: (id: number) => unwrap(api.POST("/api/accounts/delete", { params: { query: { id: String(id) } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: accountsKey })
  })
  const list = accounts.data ?? []
  return (
    <>
      <div className="page-header">
        <h1>{texts.title}</h1>
        <button type="button" className="primary" onClick={() => setCreating(true)}>{texts.createAccount}</button>
      </div>
      <p className="muted">{texts.intro}</p>
      <ErrorAlert error={accounts.error ?? undefined} />
      <div className="table-wrap">
        <table aria-label={texts.table}>
          <thead>
            <tr>
              <th scope="col">{texts.username}</th>
              <th scope="col">{texts.displayName}</th>
              <th scope="col">{texts.role}</th>
              <th scope="col">{texts.bots}</th>
              <th scope="col">{texts.enabled}</th>
              <th scope="col">{texts.lastSignIn}</th>
              <th scope="col">{texts.actions}</th>
            </tr>
          </thead>
          <tbody>
            {accounts.isPending
              ? (
                <tr>
                  <td colSpan={7}>{common.loading}</td>
                </tr>
              )
              : list.length === 0
              ? (
                <tr>
                  <td colSpan={7}>{texts.empty}</td>
                </tr>
              )
              : list.map((account) => (
                <tr key={account.id}>
                  <th scope="row">
                    {account.username}
                    {account.id === me.id ? <span className="muted"> {texts.you}</span> : null}
                  </th>
                  <td>{account.display_name}</td>
                  <td>{account.role === "admin" ? common.admin : common.operator}</td>
                  <td>{botNames(account.role, account.bot_ids)}</td>
                  <td>{account.enabled ? common.yes : common.no}</td>
                  <td>{account.last_login_at === "" ? texts.never : formatTime(account.last_login_at)}</td>
                  <td className="actions">
                    <button type="button" onClick={() => setEditing(account)}>{common.edit}</button>
                    <button type="button" onClick={() => setDeleting(account)}>{common.delete}</button>
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
      <CreateAccountDialog open={creating} onClose={() => setCreating(false)} />
      <Dialog title={texts.editAccount} open={editing !== undefined} onClose={() => setEditing(undefined)}>
        {editing === undefined ? null : <EditAccountForm key={editing.id} account={editing} onClose={() => setEditing(undefined)} />}
      </Dialog>
      <Confirm
        title={common.delete}
        action={common.delete}
        {...(deleting === undefined ? {} : { body: texts.deleteBody(deleting.username) })}
        open={deleting !== undefined}
        onClose={() => setDeleting(undefined)}
        onConfirm={() => deleting === undefined ? Promise.resolve() : remove.mutateAsync(deleting.id)}
      />
    </>
  )
}
