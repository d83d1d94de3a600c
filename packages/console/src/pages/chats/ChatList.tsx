import { Link, useParams } from "@tanstack/react-router"
import { useVirtualizer } from "@tanstack/react-virtual"
import { useEffect, useId, useMemo, useRef, useState } from "react"
import type { Bot, Chat, Message } from "../../api/client"
import { useFormatTime } from "../../i18n"
import { useAccount } from "../../session"
import { ErrorAlert } from "../../ui/Alert"
import { useDebounced } from "../../ui/useDebounced"
import { ChatTabs } from "./ChatTabs"
import { type ChatTab, chatName, senderName, useBotsById, useChatList } from "./data"
import { useChatTexts } from "./texts"

/** Each row's height in pixels; fixed, so 10,000 rows cost as little to lay out as 10. */
const rowHeight = 64

/** What a message shows in one line: its text, else the kind of its media. */
export const previewOf = (m: Message | null): string =>
  m === null ? "" : m.text !== "" ? m.text.replace(/\s+/g, " ") : m.media_type === undefined ? "" : `[${m.media_type}]`

const ChatRow = ({ chat, bot, open, index, size, top }: {
  readonly chat: Chat
  readonly top: number
  readonly bot: Bot | undefined
  readonly open: boolean
  readonly index: number
  readonly size: number
}) => {
  const texts = useChatTexts()
  const formatTime = useFormatTime()
  const badgeId = useId()
  const last = chat.last_message
  const preview = previewOf(last)
  const from = last === null || chat.type === "private" && last.direction === "in"
    ? ""
    : last.direction === "out"
    ? texts.bot + ": "
    : senderName(last, "") + ": "
  return (
    <li
      className={"chat-row" + (open ? " current" : "")}
      aria-posinset={index + 1}
      aria-setsize={size}
      style={{ transform: `translateY(${top}px)` }}
    >
      <Link
        to="/chats/$botId/$chatId"
        params={{ botId: String(chat.bot_id), chatId: String(chat.chat_id) }}
        className="chat-link"
        aria-current={open ? "page" : undefined}
        aria-describedby={chat.unread_count > 0 ? badgeId : undefined}
      >
        <span className="chat-name">{chatName(chat)}</span>
        <span className="chat-bot"> · {bot?.name || bot?.username || `#${chat.bot_id}`}</span>
      </Link>
      {chat.last_message_at > 0 ? <span className="chat-time">{formatTime(chat.last_message_at)}</span> : null}
      <span className="chat-preview">{from}{preview}</span>
      {chat.unread_count > 0
        ? <span className="badge chat-unread" id={badgeId} aria-label={texts.unread(chat.unread_count)}>{chat.unread_count}</span>
        : null}
    </li>
  )
}

/**
 * The chat list: the tabs (`ChatTabs`), searchbox `Search chats` (the API's `q`), list `Chats`, newest
 * activity first, virtualised and loaded a page at a time as it scrolls.
 */
export const ChatList = () => {
  const texts = useChatTexts()
  const account = useAccount()
  const [input, setInput] = useState("")
  const [tab, setTab] = useState<ChatTab>("all")
  const q = useDebounced(input.trim(), 250)
  const list = useChatList(q, tab, account.id)
  const bots = useBotsById()
  const params = useParams({ strict: false })
  const chats = useMemo(() => list.data?.pages.flatMap((p) => p.items) ?? [], [list.data])
  const scroller = useRef<HTMLDivElement>(null)
  const searchId = useId()
  const panelId = useId()
  const virtualizer = useVirtualizer({
    count: chats.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: 10,
    getItemKey: (index) => {
      const c = chats[index]
      return c === undefined ? index : `${c.bot_id}:${c.chat_id}`
    }
  })
  const rows = virtualizer.getVirtualItems()
  const lastIndex = rows.at(-1)?.index ?? -1
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && lastIndex >= chats.length - 20) void fetchNextPage()
  }, [lastIndex, chats.length, hasNextPage, isFetchingNextPage, fetchNextPage])
  const size = hasNextPage ? -1 : chats.length
  return (
    <div className="chat-list">
      <ChatTabs tab={tab} onChange={setTab} panelId={panelId} />
      <div className="chat-search">
        <label htmlFor={searchId} className="visually-hidden">{texts.searchChats}</label>
        <input
          id={searchId}
          type="search"
          placeholder={texts.searchChats}
          value={input}
          maxLength={256}
          onChange={(e) => setInput(e.target.value)}
        />
      </div>
      <ErrorAlert error={list.error} />
      <div className="chat-list-scroll" ref={scroller} role="tabpanel" id={panelId} aria-labelledby={`chat-tab-${tab}`}>
        <ul
          role="list"
          aria-label={texts.chatList}
          aria-busy={list.isFetching ? true : undefined}
          className="chat-rows"
          style={{ height: virtualizer.getTotalSize() }}
        >
          {rows.map((row) => {
            const chat = chats[row.index]
            if (chat === undefined) return null
            const open = params.botId === String(chat.bot_id) && params.chatId === String(chat.chat_id)
            return (
              <ChatRow
                key={row.key}
                chat={chat}
                bot={bots.get(chat.bot_id)}
                open={open}
                index={row.index}
                size={size}
                top={row.start}
              />
            )
          })}
        </ul>
        {list.isSuccess && chats.length === 0
          ? <p className="muted chat-list-empty">{q === "" ? texts.noChats : texts.noChatsMatch}</p>
          : null}
        {isFetchingNextPage ? <p className="muted chat-list-empty">{texts.loadingMore}</p> : null}
      </div>
    </div>
  )
}
