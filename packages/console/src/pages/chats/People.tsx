import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useEffect, useId, useRef, useState } from "react"
import { api, ApiFailure, type Bot, type Schemas, unwrap } from "../../api/client"
import { useFormatTime } from "../../i18n"
import { describe, ErrorAlert } from "../../ui/Alert"
import { Dialog } from "../../ui/Dialog"
import { CheckboxField, SelectField } from "../../ui/Field"
import { useCommonTexts } from "../../texts"
import { keys, personName, usePerson, useTags } from "./data"
import { useChatTexts } from "./texts"

type Texts = ReturnType<typeof useChatTexts>

const permissionChoices = [
  ["can_send_messages", "canSendMessages"],
  ["can_send_media", "canSendMedia"],
  ["can_send_other_messages", "canSendOther"],
  ["can_add_web_page_previews", "canAddPreviews"]
] as const

/** The media permissions one "Send photos, videos and files" box stands for. */
const mediaPermissions = [
  "can_send_audios",
  "can_send_documents",
  "can_send_photos",
  "can_send_videos",
  "can_send_video_notes",
  "can_send_voice_notes"
] as const

const rightChoices = [
  ["can_delete_messages", "canDelete"],
  ["can_pin_messages", "canPin"],
  ["can_restrict_members", "canRestrict"],
  ["can_invite_users", "canInvite"],
  ["can_change_info", "canChangeInfo"],
  ["can_manage_chat", "canManageChat"]
] as const

const durations = [["3600", "forHour"], ["86400", "forDay"], ["604800", "forWeek"], ["0", "forEver"]] as const

/** `Restrict`: what the person may still do, and for how long. */
const RestrictDialog = ({ open, onClose, onSubmit }: {
  readonly open: boolean
  readonly onClose: () => void
  readonly onSubmit: (permissions: Schemas["ChatPermissions"], until: number) => Promise<unknown>
}) => {
  const texts = useChatTexts()
  const common = useCommonTexts()
  const [allowed, setAllowed] = useState<ReadonlySet<string>>(new Set())
  const [duration, setDuration] = useState("86400")
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  const close = () => {
    setError(undefined)
    onClose()
  }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    const permissions: Record<string, boolean> = {}
    for (const [name] of permissionChoices) {
      if (name === "can_send_media") for (const m of mediaPermissions) permissions[m] = allowed.has(name)
      else permissions[name] = allowed.has(name)
    }
    const seconds = Number(duration)
    setBusy(true)
    onSubmit(permissions, seconds === 0 ? 0 : Math.floor(Date.now() / 1000) + seconds)
      .then(close, setError)
      .finally(() => setBusy(false))
  }
  return (
    <Dialog title={texts.restrict} open={open} onClose={close}>
      <form noValidate onSubmit={submit}>
        <p>{texts.restrictBody}</p>
        {permissionChoices.map(([name, label]) => (
          <CheckboxField
            key={name}
            label={texts[label]}
            checked={allowed.has(name)}
            onChange={(e) => {
              const next = new Set(allowed)
              if (e.target.checked) next.add(name)
              else next.delete(name)
              setAllowed(next)
            }}
          />
        ))}
        <SelectField label={texts.until} value={duration} onChange={(e) => setDuration(e.target.value)}>
          {durations.map(([value, label]) => <option key={value} value={value}>{texts[label]}</option>)}
        </SelectField>
        <ErrorAlert error={error} />
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={busy}>{texts.restrict}</button>
          <button type="button" onClick={close}>{common.cancel}</button>
        </div>
      </form>
    </Dialog>
  )
}

/** `Promote`: the administrator rights to give. */
const PromoteDialog = ({ open, onClose, onSubmit }: {
  readonly open: boolean
  readonly onClose: () => void
  readonly onSubmit: (rights: Schemas["RightsGrant"]) => Promise<unknown>
}) => {
  const texts = useChatTexts()
  const common = useCommonTexts()
  const [granted, setGranted] = useState<ReadonlySet<string>>(new Set(["can_delete_messages", "can_pin_messages"]))
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  const close = () => {
    setError(undefined)
    onClose()
  }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    const rights: Record<string, boolean> = {}
    for (const [name] of rightChoices) rights[name] = granted.has(name)
    setBusy(true)
    onSubmit(rights).then(close, setError).finally(() => setBusy(false))
  }
  return (
    <Dialog title={texts.promote} open={open} onClose={close}>
      <form noValidate onSubmit={submit}>
        <p>{texts.promoteBody}</p>
        {rightChoices.map(([name, label]) => (
          <CheckboxField
            key={name}
            label={texts[label]}
            checked={granted.has(name)}
            onChange={(e) => {
              const next = new Set(granted)
              if (e.target.checked) next.add(name)
              else next.delete(name)
              setGranted(next)
            }}
          />
        ))}
        <ErrorAlert error={error} />
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={busy}>{texts.promote}</button>
          <button type="button" onClick={close}>{common.cancel}</button>
        </div>
      </form>
    </Dialog>
  )
}

const Tags = ({ botId, chatId, userId, username }: {
  readonly botId: number
  readonly chatId: number
  readonly userId: number
  readonly username: string
}) => {
  const texts = useChatTexts()
  const client = useQueryClient()
  const tags = useTags(botId, chatId, userId)
  const [tag, setTag] = useState("")
  const id = useId()
  const changed = () => {
    void client.invalidateQueries({ queryKey: keys.tags(botId, chatId, userId) })
    void client.invalidateQueries({ queryKey: keys.person(userId) })
    void client.invalidateQueries({ queryKey: keys.chat(botId, chatId) })
  }
  const add = useMutation({
    mutationFn: (name: string) =>
      unwrap(api.POST("/api/tags/add", {
        body: { bot_id: botId, chat_id: chatId, user_id: userId, tag: name, ...(username === "" ? {} : { username }) }
      })),
    onSuccess: () => {
      setTag("")
      changed()
    }
  })
  const remove = useMutation({
    mutationFn: (tagId: number) =>
      unwrap(api.POST("/api/tags/remove", { params: { query: { id: String(tagId), bot_id: String(botId) } } })),
    onSuccess: changed
  })
  const tagError = add.error instanceof ApiFailure ? add.error.fieldMessage("tag") : undefined
  return (
    <section className="people-section" aria-labelledby={id + "-h"}>
      <h3 id={id + "-h"}>{texts.tags}</h3>
      <ErrorAlert error={tags.error ?? remove.error} />
      {tags.data === undefined ? null : tags.data.length === 0 ? <p className="muted">{texts.noTags}</p> : (
        <ul className="tag-list">
          {tags.data.map((t) => (
            <li key={t.id} className="tag" style={t.color === "" ? undefined : { borderColor: t.color }}>
              <span>{t.tag}</span>
              <button
                type="button"
                className="tag-remove"
                aria-label={texts.removeTag(t.tag)}
                title={texts.removeTag(t.tag)}
                disabled={remove.isPending}
                onClick={() => remove.mutate(t.id)}
              >
                <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="tag-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          if (tag.trim() !== "" && !add.isPending) add.mutate(tag.trim())
        }}
      >
        <label htmlFor={id}>{texts.tag}</label>
        <div className="tag-form-row">
          <input
            id={id}
            value={tag}
            maxLength={64}
            onChange={(e) => setTag(e.target.value)}
            {...(tagError === undefined ? {} : { "aria-invalid": true, "aria-describedby": id + "-error" })}
          />
          <button type="submit" disabled={add.isPending}>{texts.addTag}</button>
        </div>
        {tagError === undefined ? <ErrorAlert error={add.error} /> : <p id={id + "-error"} className="field-error">{tagError}</p>}
      </form>
    </section>
  )
}

const Moderation = ({ botId, chatId, userId, name, onNotice }: {
  readonly botId: number
  readonly chatId: number
  readonly userId: number
  readonly name: string
  readonly onNotice: (text: string) => void
}) => {
  const texts = useChatTexts()
  const [dialog, setDialog] = useState<"restrict" | "promote" | undefined>(undefined)
  const member = { bot_id: botId, chat_id: chatId, user_id: userId }
  const unban = useMutation({
    mutationFn: () => unwrap(api.POST("/api/chats/unban", { body: { ...member, only_if_banned: true } })),
    onSuccess: () => onNotice(texts.unbanned(name))
  })
  return (
    <section className="people-section" aria-label={texts.moderation}>
      <div className="people-actions">
        <button type="button" onClick={() => unban.mutate()} disabled={unban.isPending}>{texts.unban}</button>
        <button type="button" onClick={() => setDialog("restrict")}>{texts.restrict}</button>
        <button type="button" onClick={() => setDialog("promote")}>{texts.promote}</button>
      </div>
      <ErrorAlert error={unban.error} />
      <RestrictDialog
        open={dialog === "restrict"}
        onClose={() => setDialog(undefined)}
        onSubmit={(permissions, until) =>
          unwrap(api.POST("/api/chats/restrict", {
            body: { ...member, permissions, ...(until === 0 ? {} : { until_date: until }) }
          })).then(() => onNotice(texts.restricted(name)))}
      />
      <PromoteDialog
        open={dialog === "promote"}
        onClose={() => setDialog(undefined)}
        onSubmit={(rights) =>
          unwrap(api.POST("/api/chats/promote", { body: { ...member, rights } })).then(() => onNotice(texts.promoted(name)))}
      />
    </section>
  )
}

const Seen = ({ texts, label, at }: { readonly texts: Texts; readonly label: string; readonly at: number }) => {
  const formatTime = useFormatTime()
  return (
    <>
      <dt>{label}</dt>
      <dd>{at > 0 ? formatTime(at) : texts.noOtherBots}</dd>
    </>
  )
}

/**
 * complementary `People`: the private chat's person, or the one picked in a group: names, username,
 * first and last seen, the other bots that know them, this chat's tags on them (`Tag`, `Add tag`,
 * `Remove tag <tag>`), and in groups `Unban`, `Restrict`, `Promote`.
 */
export const People = ({ botId, chatId, userId, fallbackName, group, manage, bots, open, onClose, onNotice }: {
  readonly botId: number
  readonly chatId: number
  readonly userId: number | undefined
  /** The person's name from the messages, while (or if) the API does not know them. */
  readonly fallbackName: string
  readonly group: boolean
  readonly manage: boolean
  readonly bots: ReadonlyMap<number, Bot>
  /** Shown on narrow screens (on wide ones it always is). */
  readonly open: boolean
  /** Closes it on narrow screens. */
  readonly onClose: () => void
  readonly onNotice: (text: string) => void
}) => {
  const texts = useChatTexts()
  const common = useCommonTexts()
  const person = usePerson(userId)
  const close = useRef<HTMLButtonElement>(null)
  // opened over the chat on a narrow screen: the focus goes into it (the close button shows only there)
  useEffect(() => {
    if (open && close.current?.offsetParent !== null) close.current?.focus()
  }, [open])
  const p = person.data
  const name = p === undefined ? fallbackName : personName(p)
  const otherBots = p === undefined
    ? []
    : [...new Set(p.chats.map((c) => c.bot_id).filter((id) => id !== botId))].map((id) => bots.get(id)?.name ?? `#${id}`)
  return (
    <aside id="people-panel" className={"people" + (open ? " open" : "")} aria-label={texts.people}>
      <button type="button" ref={close} className="people-close" onClick={onClose}>{common.close}</button>
      {userId === undefined ? <p className="muted">{texts.pickPerson}</p> : (
        <>
          <h2>{name || String(userId)}</h2>
          {person.error instanceof ApiFailure && person.error.status === 404
            ? null
            : person.error === null ? null : <p className="alert" role="alert">{describe(person.error, common.networkError)}</p>}
          <dl className="person-facts">
            <dt>{texts.username}</dt>
            <dd>{p === undefined || p.username === "" ? "—" : "@" + p.username}</dd>
            <dt>{texts.userId}</dt>
            <dd>{userId}</dd>
            {p === undefined ? null : (
              <>
                {p.language_code === "" ? null : (
                  <>
                    <dt>{texts.language}</dt>
                    <dd>{p.language_code}</dd>
                  </>
                )}
                <Seen texts={texts} label={texts.firstSeen} at={p.first_seen_at} />
                <Seen texts={texts} label={texts.lastSeen} at={p.last_seen_at} />
                <dt>{texts.otherBots}</dt>
                <dd>{otherBots.length === 0 ? texts.noOtherBots : otherBots.join(", ")}</dd>
                {p.chats.some((c) => c.bot_id === botId && c.chat_id === userId && !c.reachable)
                  ? (
                    <>
                      <dt>{texts.unreachable}</dt>
                      <dd>{p.chats.find((c) => c.bot_id === botId && c.chat_id === userId)?.unreachable_reason}</dd>
                    </>
                  )
                  : null}
                <dt>{texts.reachableThrough}</dt>
                <dd>
                  {p.reachable_bot_ids.length === 0
                    ? texts.noOtherBots
                    : p.reachable_bot_ids.map((id) => bots.get(id)?.name || `#${id}`).join(", ")}
                </dd>
              </>
            )}
          </dl>
          <Tags botId={botId} chatId={chatId} userId={userId} username={p?.username ?? ""} />
          {group && manage
            ? <Moderation botId={botId} chatId={chatId} userId={userId} name={name || String(userId)} onNotice={onNotice} />
            : null}
        </>
      )}
    </aside>
  )
}
