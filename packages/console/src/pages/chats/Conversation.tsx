import { useMutation, useQueryClient } from "@tanstack/react-query"
import { useId, useState } from "react"
import { api, type Chat, type Schemas, unwrap } from "../../api/client"
import { useFormatTime } from "../../i18n"
import { useAccount } from "../../session"
import { useCommonTexts } from "../../texts"
import { ErrorAlert } from "../../ui/Alert"
import { Dialog } from "../../ui/Dialog"
import { useConversationTexts } from "./conversationTexts"
import { putChat } from "./data"

type Change = Omit<Schemas["ChatUpdate"], "bot_id" | "chat_id">

const priorities = ["none", "low", "medium", "high", "urgent"] as const

/** Unix seconds of the snooze presets, from `now` in the browser's time zone: in an hour, tomorrow 9:00, next Monday 9:00. */
export const snoozePresets = (now: Date) => {
  const tomorrow = new Date(now)
  tomorrow.setDate(now.getDate() + 1)
  tomorrow.setHours(9, 0, 0, 0)
  const monday = new Date(now)
  monday.setDate(now.getDate() + ((8 - now.getDay()) % 7 || 7))
  monday.setHours(9, 0, 0, 0)
  const seconds = (d: Date) => Math.floor(d.getTime() / 1000)
  return { hour: seconds(now) + 3600, tomorrow: seconds(tomorrow), nextWeek: seconds(monday) }
}

/**
 * A chat's conversation state and its actions: status, assignee and priority shown; buttons `Resolve`
 * (unless resolved), `Reopen` (when resolved, pending or snoozed), `Snooze` (a dialog of presets),
 * `Assign to me`, and the `Priority` select. Answers and live `chat` events update it.
 */
export const ConversationBar = ({ chat }: { readonly chat: Chat }) => {
  const texts = useConversationTexts()
  const common = useCommonTexts()
  const formatTime = useFormatTime()
  const account = useAccount()
  const client = useQueryClient()
  const priorityId = useId()
  const [snoozing, setSnoozing] = useState(false)
  const update = useMutation({
    mutationFn: (change: Change) =>
      unwrap(api.POST("/api/chats/update", { body: { bot_id: chat.bot_id, chat_id: chat.chat_id, ...change } })),
    onSuccess: (c) => putChat(client, c)
  })
  const change = (c: Change) => update.mutate(c)
  const snooze = (until: number) => {
    setSnoozing(false)
    change({ status: "snoozed", snoozed_until: until })
  }
  const presets = snoozePresets(new Date())
  return (
    <section className="conversation-bar" aria-label={texts.conversation}>
      <p className="conversation-state">
        <span className={`status-badge status-${chat.status}`}>
          {chat.status === "snoozed" && chat.snoozed_until > 0
            ? texts.snoozedUntil(formatTime(chat.snoozed_until))
            : texts.statusName(chat.status)}
        </span>
        <span className="conversation-assignee">
          {chat.assignee_id === 0 ? texts.nobody : texts.assignedTo(chat.assignee_name || `#${chat.assignee_id}`)}
        </span>
      </p>
      <div className="conversation-actions">
        {chat.status !== "resolved"
          ? <button type="button" data-shortcut="e" disabled={update.isPending} onClick={() => change({ status: "resolved" })}>{texts.resolve}</button>
          : null}
        {chat.status !== "open"
          ? <button type="button" disabled={update.isPending} onClick={() => change({ status: "open" })}>{texts.reopen}</button>
          : null}
        <button type="button" aria-haspopup="dialog" disabled={update.isPending} onClick={() => setSnoozing(true)}>
          {texts.snooze}
        </button>
        {chat.assignee_id !== account.id
          ? (
            <button type="button" disabled={update.isPending} onClick={() => change({ assignee_id: account.id })}>
              {texts.assignToMe}
            </button>
          )
          : <button type="button" disabled={update.isPending} onClick={() => change({ assignee_id: 0 })}>{texts.unassign}</button>}
        <label htmlFor={priorityId} className="visually-hidden">{texts.priority}</label>
        <select
          id={priorityId}
          value={chat.priority}
          disabled={update.isPending}
          onChange={(e) => change({ priority: e.target.value as (typeof priorities)[number] })}
        >
          {priorities.map((p) => <option key={p} value={p}>{texts.priorityName(p)}</option>)}
        </select>
      </div>
      <ErrorAlert error={update.error} />
      <Dialog title={texts.snoozeFor} open={snoozing} onClose={() => setSnoozing(false)}>
        <div className="snooze-presets">
          <button type="button" onClick={() => snooze(presets.hour)}>{texts.inHour}</button>
          <button type="button" onClick={() => snooze(presets.tomorrow)}>{texts.tomorrow}</button>
          <button type="button" onClick={() => snooze(presets.nextWeek)}>{texts.nextWeek}</button>
        </div>
        <div className="dialog-actions">
          <button type="button" onClick={() => setSnoozing(false)}>{common.cancel}</button>
        </div>
      </Dialog>
    </section>
  )
}
