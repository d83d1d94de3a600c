import { Link } from "@tanstack/react-router"
import { useEffect, useId, useMemo, useState } from "react"
import { useFormatTime } from "../../i18n"
import { ErrorAlert } from "../../ui/Alert"
import { senderName, useBotsById, useMessageSearch } from "./data"
import { useNotesTexts } from "./notesTexts"
import { useChatTexts } from "./texts"

/**
 * searchbox `Search messages`: across every chat the session may read; list `Search results` 300 ms
 * after typing stops (or at once on Enter), each result a link that opens its chat at that message.
 */
export const MessageSearch = () => {
  const texts = { ...useChatTexts(), ...useNotesTexts() }
  const formatTime = useFormatTime()
  const bots = useBotsById()
  const id = useId()
  const [input, setInput] = useState("")
  const [q, setQ] = useState("")
  useEffect(() => {
    const timer = setTimeout(() => setQ(input.trim()), 300)
    return () => clearTimeout(timer)
  }, [input])
  const search = useMessageSearch(q)
  const results = useMemo(() => search.data?.pages.flatMap((p) => p.items) ?? [], [search.data])
  return (
    <div className="message-search">
      <label htmlFor={id} className="visually-hidden">{texts.searchMessages}</label>
      <input
        id={id}
        type="search"
        placeholder={texts.searchMessages}
        value={input}
        maxLength={256}
        onChange={(e) => setInput(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault()
            setQ(input.trim())
          } else if (e.key === "Escape" && input !== "") {
            e.preventDefault()
            setInput("")
          }
        }}
      />
      {q === "" ? null : (
        <div className="search-results">
          <ErrorAlert error={search.error} />
          <ul aria-label={texts.searchResults} aria-busy={search.isFetching ? true : undefined}>
            {results.map((m) => {
              const bot = bots.get(m.bot_id)
              return (
                <li key={`${m.kind}:${m.bot_id}:${m.chat_id}:${m.id}`}>
                  <Link
                    to="/chats/$botId/$chatId"
                    params={{ botId: String(m.bot_id), chatId: String(m.chat_id) }}
                    search={m.kind === "message" ? { message: m.id } : {}}
                    className={m.kind === "note" ? "search-result search-result-note" : "search-result"}
                  >
                    <span className="search-result-head">
                      <span className="search-result-sender">
                        {m.kind === "message" ? senderName(m, bot?.name ?? "") : `${texts.privateNote} · ${m.author_name}`}
                      </span>
                      <span className="muted">
                        {" "}· {bot?.name || `#${m.bot_id}`} · {formatTime(m.kind === "message" ? m.date : m.created_at)}
                      </span>
                    </span>
                    {/* the API escapes the text and adds only <mark>: safe as HTML (docs/http-api.md, Search) */}
                    <span className="search-result-text" dangerouslySetInnerHTML={{ __html: m.highlight }} />
                  </Link>
                </li>
              )
            })}
          </ul>
          {search.isPending ? <p className="muted">{texts.searching}</p> : null}
          {search.isSuccess && results.length === 0 ? <p className="muted">{texts.nothingFound}</p> : null}
          <div className="search-actions">
            {search.hasNextPage
              ? (
                <button type="button" onClick={() => void search.fetchNextPage()} disabled={search.isFetchingNextPage}>
                  {texts.moreResults}
                </button>
              )
              : null}
            <button type="button" onClick={() => {
              setInput("")
              setQ("")
            }}>
              {texts.clearSearch}
            </button>
          </div>
        </div>
      )}
    </div>
  )
}
