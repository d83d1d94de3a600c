import { useMutation, useQueryClient } from "@tanstack/react-query"
import { Link, useParams, useSearch } from "@tanstack/react-router"
import { useCallback, useEffect, useMemo, useRef, useState } from "react"
import { api, ApiFailure, type Message, unwrap } from "../../api/client"
import { useCommonTexts } from "../../texts"
import { ErrorAlert, fieldErrors } from "../../ui/Alert"
import { Confirm } from "../../ui/Confirm"
import { Dialog } from "../../ui/Dialog"
import { TextAreaField } from "../../ui/Field"
import { CannedRepliesDialog } from "./CannedReplies"
import { Composer } from "./Composer"
import { ConversationBar } from "./Conversation"
import {
  chatName,
  chronological,
  isGroup,
  keys,
  messageKey,
  putChat,
  putMessage,
  senderName,
  useBotsById,
  useChat,
  useMessages,
  usePerson
} from "./data"
import { type MessageHandlers, MessageItem } from "./MessageItem"
import { NoteComposer, NoteItem } from "./NoteItem"
import { useNotes, withNotes } from "./notes"
import { useNotesTexts } from "./notesTexts"
import { People } from "./People"
import { useChatTexts } from "./texts"

/** `Edit message`: the bot's own message's new text. */
const EditDialog = ({ message, onClose, onSave }: {
  readonly message: Message | undefined
  readonly onClose: () => void
  readonly onSave: (text: string) => Promise<unknown>
}) => {
  const texts = useChatTexts()
  const common = useCommonTexts()
  const [text, setText] = useState("")
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    if (message !== undefined) setText(message.text)
  }, [message])
  const close = () => {
    setError(undefined)
    onClose()
  }
  const errors = fieldErrors(error, ["text"])
  return (
    <Dialog title={texts.editMessage} open={message !== undefined} onClose={close}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          setBusy(true)
          onSave(text).then(close, setError).finally(() => setBusy(false))
        }}
      >
        <TextAreaField label={texts.text} value={text} rows={5} onChange={(e) => setText(e.target.value)} error={errors.byField.text} />
        <ErrorAlert error={errors.rest} />
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={busy}>{texts.save}</button>
          <button type="button" onClick={close}>{common.cancel}</button>
        </div>
      </form>
    </Dialog>
  )
}

/**
 * log `Messages`: oldest at the top, newest at the bottom, where it opens and stays while new ones come
 * (the scroller is anchored at its end); older pages load when the top comes near; opened at a message
 * (`?message=`), it loads back to that message and shows it.
 */
const MessageLog = ({ botId, chatId, botName, group, manage, pinned, target, on, scroller }: {
  readonly botId: number
  readonly chatId: number
  readonly botName: string
  readonly group: boolean
  readonly manage: boolean
  readonly pinned: ReadonlySet<number>
  readonly target: number | undefined
  readonly on: MessageHandlers
  readonly scroller: React.RefObject<HTMLDivElement | null>
}) => {
  const texts = useChatTexts()
  const history = useMessages(botId, chatId)
  const messages = useMemo(() => chronological(history.data?.pages ?? []), [history.data])
  const byId = useMemo(() => new Map(messages.map((m) => [m.id, m])), [messages])
  const top = useRef<HTMLDivElement>(null)
  const [nearTop, setNearTop] = useState(false)
  const [shown, setShown] = useState<number | undefined>(undefined)
  const { hasNextPage, isFetchingNextPage, fetchNextPage, isSuccess } = history
  const notes = useNotes(botId, chatId)
  const items = useMemo(() => withNotes(messages, notes.data ?? [], isSuccess && !hasNextPage), [
    messages,
    notes.data,
    isSuccess,
    hasNextPage
  ])

  useEffect(() => {
    const sentinel = top.current
    const root = scroller.current
    if (sentinel === null || root === null) return
    const observer = new IntersectionObserver(([entry]) => setNearTop(entry?.isIntersecting === true), {
      root,
      rootMargin: "400px 0px 0px 0px"
    })
    observer.observe(sentinel)
    return () => observer.disconnect()
  }, [scroller])

  const seeking = target !== undefined && shown !== target
  const targetLoaded = target !== undefined && byId.has(target)
  useEffect(() => {
    if (!isSuccess || !hasNextPage || isFetchingNextPage) return
    if (nearTop || seeking && !targetLoaded) void fetchNextPage()
  }, [nearTop, seeking, targetLoaded, isSuccess, hasNextPage, isFetchingNextPage, fetchNextPage])

  useEffect(() => {
    if (target === undefined || !targetLoaded || shown === target) return
    const article = document.getElementById(`message-${target}`)
    if (article === null) return
    article.scrollIntoView({ block: "center" })
    article.focus({ preventScroll: true })
    setShown(target)
  }, [target, targetLoaded, shown, messages])

  return (
    <div className="message-scroll" ref={scroller}>
      <div
        role="log"
        aria-label={texts.messages}
        aria-busy={history.isPending || isFetchingNextPage ? true : undefined}
        className="message-log"
      >
        <div ref={top} className="log-top">
          {isFetchingNextPage || history.isPending
            ? <p className="muted">{texts.olderMessages}</p>
            : isSuccess && !hasNextPage && messages.length > 0
            ? <p className="muted">{texts.beginning}</p>
            : null}
        </div>
        <ErrorAlert error={history.error} />
        {isSuccess && messages.length === 0 ? <p className="muted">{texts.noMessages}</p> : null}
        {items.map(({ kind, message: m, note }) =>
          kind === "note" ? <NoteItem key={`note-${note.id}`} note={note} /> : (
            <MessageItem
              key={messageKey(m)}
              m={m}
              botName={botName}
              group={group}
              manage={manage}
              pinned={pinned.has(m.id)}
              highlighted={m.id === target}
              replyTo={m.reply_to_message_id === undefined ? undefined : byId.get(m.reply_to_message_id) ?? null}
              on={on}
            />
          )
        )}
      </div>
    </div>
  )
}

/**
 * note `Unreachable through this bot`: the person blocked the bot (or cannot be written to), with Telegram's
 * reason and the other bots that can still reach them.
 */
const Unreachable = ({ botId, chatId, reason, bots }: {
  readonly botId: number
  readonly chatId: number
  readonly reason: string
  readonly bots: ReturnType<typeof useBotsById>
}) => {
  const texts = useChatTexts()
  const person = usePerson(chatId > 0 ? chatId : undefined)
  const others = (person.data?.reachable_bot_ids ?? []).filter((id) => id !== botId)
    .map((id) => bots.get(id)?.name || bots.get(id)?.username || `#${id}`)
  return (
    <section className="note unreachable" aria-label={texts.unreachable}>
      <p><strong>{texts.unreachable}</strong> · <span className="muted">{texts.unreachableReason(reason)}</span></p>
      {person.data === undefined ? null : (
        <p>{others.length === 0 ? texts.reachableThroughNone : `${texts.reachableThrough}: ${others.join(", ")}`}</p>
      )}
    </section>
  )
}

type Pending = { readonly kind: "delete" | "ban"; readonly message: Message }

/** One chat: its header, `Messages`, the composer and `People`; opening it marks it read. */
const Chat = ({ botId, chatId, target }: { readonly botId: number; readonly chatId: number; readonly target: number | undefined }) => {
  const texts = useChatTexts()
  const client = useQueryClient()
  const bots = useBotsById()
  const bot = bots.get(botId)
  const chat = useChat(botId, chatId)
  // not the caller's to read (403), gone (404), or a bot without history (409): the error says so, alone
  const refused = chat.error instanceof ApiFailure && chat.error.status >= 400 && chat.error.status < 500
  const botName = bot?.name || bot?.username || `#${botId}`
  const group = chat.data !== undefined && isGroup(chat.data)
  const isPrivate = chat.data?.type === "private"
  // moderation and message actions: the bot keeps history; the caller sees its chats, so acts on them
  const manage = bot?.manage_enabled === true
  const scroller = useRef<HTMLDivElement>(null)
  const toggle = useRef<HTMLButtonElement>(null)
  const [replyTo, setReplyTo] = useState<Message | undefined>(undefined)
  const [picked, setPicked] = useState<{ readonly id: number; readonly name: string } | undefined>(undefined)
  const [peopleOpen, setPeopleOpen] = useState(false)
  const [pinned, setPinned] = useState<ReadonlySet<number>>(new Set())
  const [pending, setPending] = useState<Pending | undefined>(undefined)
  const [editing, setEditing] = useState<Message | undefined>(undefined)
  const [notice, setNotice] = useState("")
  const [actionError, setActionError] = useState<unknown>(undefined)
  const notesTexts = useNotesTexts()
  const [managing, setManaging] = useState(false)

  const read = useMutation({
    mutationFn: () => unwrap(api.POST("/api/chats/read", { body: { bot_id: botId, chat_id: chatId } })),
    onSuccess: (c) => putChat(client, c)
  })
  const { mutate: markRead } = read
  useEffect(() => markRead(), [markRead])
  // new messages while the chat is open are read as they come (once the opening mark went through)
  const unread = chat.data?.unread_count ?? 0
  const canMark = read.isSuccess
  useEffect(() => {
    if (unread === 0 || !canMark || document.visibilityState !== "visible") return
    const timer = setTimeout(() => markRead(), 300)
    return () => clearTimeout(timer)
  }, [unread, canMark, markRead])

  const act = useCallback((action: () => Promise<unknown>, done?: () => void) => {
    setActionError(undefined)
    action().then(() => done?.(), setActionError)
  }, [])
  const ref = useCallback((m: Message) => ({ bot_id: botId, chat_id: chatId, message_id: m.id }), [botId, chatId])

  const on = useMemo<MessageHandlers>(() => ({
    reply: (m) => setReplyTo(m),
    edit: (m) => setEditing(m),
    delete: (m) => setPending({ kind: "delete", message: m }),
    ban: (m) => setPending({ kind: "ban", message: m }),
    pin: (m) =>
      act(() => unwrap(api.POST("/api/messages/pin", { body: ref(m) })), () => setPinned((s) => new Set(s).add(m.id))),
    unpin: (m) =>
      act(() => unwrap(api.POST("/api/messages/unpin", { body: ref(m) })), () =>
        setPinned((s) => {
          const next = new Set(s)
          next.delete(m.id)
          return next
        })),
    resolve: (m, outcome) =>
      act(
        () =>
          unwrap(api.POST("/api/messages/resolve-delivery", { body: { local_id: m.local_id ?? 0, outcome } })).then(
            (resolved) => putMessage(client, resolved),
            (e: unknown) => {
              void client.invalidateQueries({ queryKey: keys.messages(botId, chatId) })
              throw e
            }
          )
      ),
    showPerson: (userId) => {
      const m = client.getQueryData<{ pages: Array<Array<Message>> }>(keys.messages(botId, chatId))?.pages.flat()
        .find((x) => x.user_id === userId)
      setPicked({ id: userId, name: m === undefined ? String(userId) : senderName(m, String(userId)) })
      setPeopleOpen(true)
    }
  }), [act, ref, client, botId, chatId])

  const pendingName = pending === undefined ? "" : senderName(pending.message, String(pending.message.user_id))
  const personId = isPrivate ? chatId : group ? picked?.id : undefined
  const personFallback = isPrivate && chat.data !== undefined ? chatName(chat.data) : picked?.name ?? ""
  const onSent = useCallback((m: Message) => {
    putMessage(client, m)
    scroller.current?.scrollTo({ top: 0 })
  }, [client])

  return (
    <>
      <section className="chat-pane" aria-labelledby="chat-title">
        <header className="chat-header">
          <Link to="/chats" className="back-link">
            <span aria-hidden="true">← </span>
            {texts.backToChats}
          </Link>
          <div className="chat-title">
            <h2 id="chat-title">{chat.data === undefined ? "…" : chatName(chat.data)}</h2>
            <p className="muted">
              {botName}
              {chat.data !== undefined && chat.data.member_count > 0 ? ` · ${texts.members(chat.data.member_count)}` : ""}
            </p>
          </div>
          <button
            ref={toggle}
            type="button"
            className="people-toggle"
            aria-expanded={peopleOpen}
            aria-controls="people-panel"
            onClick={() => setPeopleOpen((o) => !o)}
          >
            {peopleOpen ? texts.hidePerson : texts.showPerson}
          </button>
        </header>
        <ErrorAlert error={chat.error} />
        {chat.data === undefined || refused ? null : <ConversationBar chat={chat.data} />}
        {chat.data?.state === "left" ? <p className="note">{texts.left}</p> : null}
        {chat.data?.state === "kicked" ? <p className="note">{texts.kicked}</p> : null}
        {chat.data?.reachable === false
          ? <Unreachable botId={botId} chatId={chatId} reason={chat.data.unreachable_reason} bots={bots} />
          : null}
        {refused ? null : (
          <>
            <MessageLog
              botId={botId}
              chatId={chatId}
              botName={botName}
              group={group}
              manage={manage}
              pinned={pinned}
              target={target}
              on={on}
              scroller={scroller}
            />
            <div className="chat-notices">
              <p role="status" className={notice === "" ? "visually-hidden" : "notice"}>{notice}</p>
              <ErrorAlert error={actionError} />
              {bot?.disabled === true ? <p className="note">{texts.botDisabled}</p> : null}
            </div>
            <Composer
              botId={botId}
              chatId={chatId}
              botName={botName}
              replyTo={replyTo}
              onCancelReply={() => setReplyTo(undefined)}
              onSent={onSent}
              focusKey={replyTo?.id}
            />
            <div className="team-tools">
              <NoteComposer botId={botId} chatId={chatId} />
              <button type="button" className="link-button" onClick={() => setManaging(true)}>
                {notesTexts.manageCannedReplies}
              </button>
            </div>
          </>
        )}
      </section>
      {refused ? null : <People
        botId={botId}
        chatId={chatId}
        userId={personId}
        fallbackName={personFallback}
        group={group}
        manage={manage}
        bots={bots}
        open={peopleOpen}
        onClose={() => {
          setPeopleOpen(false)
          toggle.current?.focus()
        }}
        onNotice={setNotice}
      />}
      <Confirm
        title={texts.delete}
        action={texts.delete}
        body={texts.deleteBody}
        open={pending?.kind === "delete"}
        onClose={() => setPending(undefined)}
        onConfirm={async () => {
          if (pending === undefined) return
          await unwrap(api.POST("/api/messages/delete", { body: ref(pending.message) }))
          putMessage(client, { ...pending.message, deleted: true })
        }}
      />
      <Confirm
        title={texts.ban}
        action={texts.ban}
        body={texts.banBody(pendingName)}
        open={pending?.kind === "ban"}
        onClose={() => setPending(undefined)}
        onConfirm={async () => {
          if (pending === undefined) return
          const m = pending.message
          await unwrap(api.POST("/api/chats/ban", { body: { bot_id: botId, chat_id: chatId, user_id: m.user_id } }))
          setNotice(texts.banned(senderName(m, String(m.user_id))))
        }}
      />
      <CannedRepliesDialog open={managing} onClose={() => setManaging(false)} />
      <EditDialog
        message={editing}
        onClose={() => setEditing(undefined)}
        onSave={async (text) => {
          if (editing === undefined) return
          putMessage(client, await unwrap(api.POST("/api/messages/edit", { body: { ...ref(editing), text } })))
        }}
      />
    </>
  )
}

/** `/chats/$botId/$chatId` (`?message=` opens it at that message). */
export const ChatView = () => {
  const texts = useChatTexts()
  const params = useParams({ strict: false })
  const search = useSearch({ strict: false })
  const botId = Number(params.botId)
  const chatId = Number(params.chatId)
  if (!Number.isSafeInteger(botId) || !Number.isSafeInteger(chatId) || botId <= 0) {
    return <p className="no-chat muted">{texts.pickChat}</p>
  }
  return <Chat key={`${botId}:${chatId}`} botId={botId} chatId={chatId} target={search.message} />
}

/** `/chats` with no chat open. */
export const NoChat = () => {
  const texts = useChatTexts()
  return <p className="no-chat muted">{texts.pickChat}</p>
}
