import { useQueryClient } from "@tanstack/react-query"
import { Outlet, useParams } from "@tanstack/react-router"
import { useLiveEvents, useLiveStatus } from "../live"
import { ChatList } from "./chats/ChatList"
import { applyLiveEvent } from "./chats/data"
import { MessageSearch } from "./chats/MessageSearch"
import { Shortcuts } from "./chats/Shortcuts"
import { useChatTexts } from "./chats/texts"

export { ChatView, NoChat } from "./chats/ChatView"

/**
 * `/chats`: the chat list (and message search) beside the open chat and People; on a narrow screen one
 * column at a time. Everything shown is kept live from /api/events.
 */
export const ChatsPage = () => {
  const texts = useChatTexts()
  const client = useQueryClient()
  useLiveEvents((event) => applyLiveEvent(client, event))
  const live = useLiveStatus()
  const params = useParams({ strict: false })
  const open = params.botId !== undefined
  return (
    <div className={"chats" + (open ? " chats-open" : "")}>
      <section className="chats-side" aria-labelledby="chats-title">
        <h1 id="chats-title" className="chats-heading">{texts.title}</h1>
        {live === "offline" ? <p className="note" role="status">{texts.liveOffline}</p> : null}
        <MessageSearch />
        <ChatList />
      </section>
      <Outlet />
      <Shortcuts />
    </div>
  )
}
