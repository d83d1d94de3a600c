import { memo } from "react"
import { href, type Message } from "../../api/client"
import { useFormatTime } from "../../i18n"
import { mediaUrl, senderName } from "./data"
import { useChatTexts } from "./texts"

/** What a message's buttons do; the chat decides (confirmations, dialogs, the People panel). */
export interface MessageHandlers {
  readonly reply: (m: Message) => void
  readonly edit: (m: Message) => void
  readonly delete: (m: Message) => void
  readonly pin: (m: Message) => void
  readonly unpin: (m: Message) => void
  readonly ban: (m: Message) => void
  readonly showPerson: (userId: number) => void
  /** An operator's word on a message whose delivery is unknown (or failed, for `resend`). */
  readonly resolve: (m: Message, outcome: "sent" | "failed" | "resend") => void
}

/**
 * The delivery mark of an outgoing message, an image named for its state: `Queued` (a clock), `Sent` (a
 * tick), `Failed: <reason>` (a cross) or `Unknown` (a question mark). Messages without a state were sent.
 */
const DeliveryMark = ({ m }: { readonly m: Message }) => {
  const texts = useChatTexts()
  const state = m.delivery ?? "sent"
  const [label, icon] = state === "queued"
    ? [texts.deliveryQueued, "🕓"]
    : state === "failed"
    ? [texts.deliveryFailed(m.delivery_error ?? ""), "✕"]
    : state === "unknown"
    ? [texts.deliveryUnknown, "?"]
    : [texts.deliverySent, "✓"]
  return (
    <span role="img" aria-label={label} title={state === "unknown" ? texts.deliveryUnknownHint : label}
      className={`delivery delivery-${state}`}>
      <span aria-hidden="true">{icon}</span>
    </span>
  )
}

const Media = ({ m, name }: { readonly m: Message; readonly name: string }) => {
  const texts = useChatTexts()
  if (m.media_type === undefined || m.file_id === undefined || m.media_type === "callback") return null
  const src = href(mediaUrl(m.bot_id, m.file_id))
  switch (m.media_type) {
    case "photo":
      return <img className="media" src={src} alt={m.text !== "" ? m.text : texts.photoFrom(name)} loading="lazy" />
    case "sticker":
      return <img className="media sticker" src={src} alt={texts.stickerFrom(name)} loading="lazy" />
    case "video":
    case "animation":
    case "video_note":
      return <video className="media" src={src} controls preload="metadata" />
    case "voice":
    case "audio":
      return <audio className="media-audio" src={src} controls preload="none" />
    case "document":
      return <a className="media-file" href={src} download>{texts.download(texts.file.toLowerCase())}</a>
  }
}

/**
 * One message: an `article` named by its sender and time, with its media inline and its buttons, always
 * there (never only on hover): `Reply`; on the bot's own `Edit`, `Delete`, `Pin`/`Unpin`; on incoming
 * group messages `Delete`, `Pin`/`Unpin`, `Ban`. In a group the sender's name is a button that shows
 * them in People.
 */
export const MessageItem = memo(({ m, botName, group, manage, pinned, highlighted, replyTo, on }: {
  readonly m: Message
  readonly botName: string
  readonly group: boolean
  /** Whether message actions and moderation are offered (the bot keeps history and the caller may). */
  readonly manage: boolean
  readonly pinned: boolean
  readonly highlighted: boolean
  /** The message this one answers, when loaded; `null` when it answers one not loaded. */
  readonly replyTo: Message | null | undefined
  readonly on: MessageHandlers
}) => {
  const texts = useChatTexts()
  const formatTime = useFormatTime()
  const out = m.direction === "out"
  const name = out ? senderName(m, botName) || botName : senderName(m, String(m.user_id))
  const time = formatTime(m.date)
  const deleted = m.deleted === true
  const canBan = group && !out && m.user_id > 0
  return (
    <article
      id={m.id === 0 && m.local_id !== undefined ? `message-local-${m.local_id}` : `message-${m.id}`}
      aria-label={`${name}, ${time}`}
      tabIndex={-1}
      className={"message " + (out ? "out" : "in") + (deleted ? " deleted" : "") + (highlighted ? " highlighted" : "")}
    >
      <header className="message-head">
        {group && !out && m.user_id > 0
          ? <button type="button" className="link sender" onClick={() => on.showPerson(m.user_id)}>{name}</button>
          : <span className="sender">{name}</span>}
        <time dateTime={new Date(m.date * 1000).toISOString()}>{time}</time>
        {m.edit_date > 0 ? <span className="muted">{texts.edited}</span> : null}
        {pinned ? <span className="muted">{texts.pinned}</span> : null}
        {deleted ? <span className="muted">{texts.deleted}</span> : null}
        {out ? <DeliveryMark m={m} /> : null}
      </header>
      {replyTo === undefined ? null : (
        <p className="quote">
          {replyTo === null
            ? texts.inReplyTo(texts.earlierMessage)
            : <>{texts.inReplyTo(senderName(replyTo, replyTo.direction === "out" ? botName : String(replyTo.user_id)))}: {replyTo.text}</>}
        </p>
      )}
      <Media m={m} name={name} />
      {m.media_type === "callback"
        ? <p className="message-text muted">{texts.pressed(m.text)}</p>
        : m.text === "" ? null : <p className="message-text">{m.text}</p>}
      {out && (m.delivery === "unknown" || m.delivery === "failed") && m.local_id !== undefined
        ? (
          <div className="message-actions delivery-actions">
            {m.delivery === "unknown"
              ? (
                <>
                  <button type="button" onClick={() => on.resolve(m, "sent")}>{texts.markSent}</button>
                  <button type="button" onClick={() => on.resolve(m, "failed")}>{texts.markFailed}</button>
                </>
              )
              : null}
            <button type="button" onClick={() => on.resolve(m, "resend")}>{texts.sendAgain}</button>
          </div>
        )
        : null}
      {/* ids below 1 are button presses, moved messages and sends Telegram did not number: nothing it can act on */}
      {m.id < 1 ? null : (
      <div className="message-actions">
        <button type="button" onClick={() => on.reply(m)}>{texts.reply}</button>
        {manage && !deleted && (out || group)
          ? (
            <>
              {out ? <button type="button" onClick={() => on.edit(m)}>{texts.edit}</button> : null}
              <button type="button" onClick={() => on.delete(m)}>{texts.delete}</button>
              {pinned
                ? <button type="button" onClick={() => on.unpin(m)}>{texts.unpin}</button>
                : <button type="button" onClick={() => on.pin(m)}>{texts.pin}</button>}
              {canBan ? <button type="button" className="danger-text" onClick={() => on.ban(m)}>{texts.ban}</button> : null}
            </>
          )
          : null}
      </div>
      )}
    </article>
  )
})
MessageItem.displayName = "MessageItem"
