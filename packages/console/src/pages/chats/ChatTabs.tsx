import { type KeyboardEvent, useRef } from "react"
import { useConversationTexts } from "./conversationTexts"
import { type ChatTab, chatTabs, tabCount, useChatCounts } from "./data"

/**
 * The chat list's tabs `Mine`, `Unassigned`, `All` (every chat not resolved) and `Resolved`, each with its
 * count from `GET /api/chats/counts`; arrow keys, Home and End move between them.
 */
export const ChatTabs = ({ tab, onChange, panelId }: {
  readonly tab: ChatTab
  readonly onChange: (tab: ChatTab) => void
  readonly panelId: string
}) => {
  const texts = useConversationTexts()
  const counts = useChatCounts()
  const refs = useRef(new Map<ChatTab, HTMLButtonElement>())
  const names: Record<ChatTab, string> = {
    mine: texts.mine,
    unassigned: texts.unassigned,
    all: texts.all,
    resolved: texts.resolvedTab
  }
  const move = (e: KeyboardEvent) => {
    const at = chatTabs.indexOf(tab)
    const to = e.key === "ArrowRight"
      ? (at + 1) % chatTabs.length
      : e.key === "ArrowLeft"
      ? (at + chatTabs.length - 1) % chatTabs.length
      : e.key === "Home"
      ? 0
      : e.key === "End"
      ? chatTabs.length - 1
      : undefined
    if (to === undefined) return
    e.preventDefault()
    const next = chatTabs[to]!
    onChange(next)
    refs.current.get(next)?.focus()
  }
  return (
    <div role="tablist" aria-label={texts.tabs} className="chat-tabs" onKeyDown={move}>
      {chatTabs.map((t) => {
        const n = counts.data === undefined ? undefined : tabCount(counts.data, t)
        return (
          <button
            key={t}
            ref={(el) => {
              if (el === null) refs.current.delete(t)
              else refs.current.set(t, el)
            }}
            type="button"
            role="tab"
            id={`chat-tab-${t}`}
            aria-description={n === undefined ? undefined : texts.tabCount(n)}
            aria-selected={t === tab}
            aria-controls={panelId}
            tabIndex={t === tab ? 0 : -1}
            className="chat-tab"
            onClick={() => onChange(t)}
          >
            {names[t]}
            {n === undefined ? null : <span aria-hidden="true" className="tab-count" data-tab-count={t}>{n}</span>}
          </button>
        )
      })}
    </div>
  )
}
