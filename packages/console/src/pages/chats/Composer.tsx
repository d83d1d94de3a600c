import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useEffect, useId, useRef, useState } from "react"
import { api, type Message, unwrap } from "../../api/client"
import { ErrorAlert } from "../../ui/Alert"
import { useCannedPicker } from "./CannedReplies"
import { keys, senderName } from "./data"
import { useChatTexts } from "./texts"

/** Images Telegram takes as photos; anything else goes as a document. */
const photoTypes = new Set(["image/jpeg", "image/png", "image/webp"])

/** A text send under the composed message's `Idempotency-Key`: sent again (a double click, a retry), it goes once. */
const sendText = (botId: number, chatId: number, text: string, replyTo: number | undefined, key: string) =>
  unwrap(api.POST("/api/messages/send", {
    body: { bot_id: botId, chat_id: chatId, text, ...(replyTo === undefined ? {} : { reply_to_message_id: replyTo }) },
    headers: { "Idempotency-Key": key }
  }))

/** A multipart send-media: the fields first, the file last (the API decides the bot and method before the file). */
const sendFile = (botId: number, chatId: number, file: File, caption: string, replyTo: number | undefined) => {
  const fields = {
    bot_id: String(botId),
    chat_id: String(chatId),
    type: photoTypes.has(file.type) ? "photo" as const : "document" as const,
    ...(caption === "" ? {} : { caption }),
    ...(replyTo === undefined ? {} : { reply_to_message_id: String(replyTo) }),
    file: file.name
  }
  return unwrap(api.POST("/api/messages/send-media", {
    body: fields,
    bodySerializer: () => {
      const form = new FormData()
      for (const [name, value] of Object.entries(fields)) if (name !== "file") form.append(name, value)
      form.append("file", file, file.name)
      return form
    }
  }))
}

/**
 * textbox `Message` (Enter sends, Shift+Enter breaks the line), `Attach file` (stages a file, `Remove
 * attachment`), `Send` (the file with the text as its caption), the reply target as region `Replying
 * to` with `Cancel reply`, and a send's error in words beside them.
 */
export const Composer = ({ botId, chatId, botName, replyTo, onCancelReply, onSent, focusKey }: {
  readonly botId: number
  readonly chatId: number
  readonly botName: string
  readonly replyTo: Message | undefined
  readonly onCancelReply: () => void
  readonly onSent: (m: Message) => void
  /** Changes when the text box should take the focus (a reply was picked). */
  readonly focusKey: unknown
}) => {
  const texts = useChatTexts()
  const client = useQueryClient()
  const [text, setText] = useState("")
  const [file, setFile] = useState<File | undefined>(undefined)
  const [preview, setPreview] = useState<string | undefined>(undefined)
  const fileInput = useRef<HTMLInputElement>(null)
  const textBox = useRef<HTMLTextAreaElement>(null)
  const id = useId()
  useEffect(() => {
    if (focusKey !== undefined) textBox.current?.focus()
  }, [focusKey])
  useEffect(() => {
    if (file === undefined || !file.type.startsWith("image/")) return setPreview(undefined)
    const url = URL.createObjectURL(file)
    setPreview(url)
    return () => URL.revokeObjectURL(url)
  }, [file])
  const canned = useCannedPicker({ botId, chatId, text, setText, textBox })
  // one key per composed message; a new one once its send has an answer (uploads cannot take one)
  const idempotencyKey = useRef(crypto.randomUUID())
  const send = useMutation({
    mutationFn: (input: { readonly text: string; readonly file: File | undefined; readonly replyTo: number | undefined }) =>
      input.file === undefined
        ? sendText(botId, chatId, input.text, input.replyTo, idempotencyKey.current)
        : sendFile(botId, chatId, input.file, input.text, input.replyTo),
    onSettled: () => {
      idempotencyKey.current = crypto.randomUUID()
    },
    onError: () => {
      // a refused or unknown send is in the history with its delivery mark
      void client.invalidateQueries({ queryKey: keys.messages(botId, chatId) })
      void client.invalidateQueries({ queryKey: keys.chat(botId, chatId) })
    },
    onSuccess: (m) => {
      setText("")
      setFile(undefined)
      if (fileInput.current !== null) fileInput.current.value = ""
      onCancelReply()
      onSent(m)
    }
  })
  const submit = (e?: FormEvent) => {
    e?.preventDefault()
    if (send.isPending) return
    if (file === undefined && text.trim() === "") return
    send.mutate({ text: file === undefined ? text : text.trim(), file, replyTo: replyTo?.id })
  }
  const lines = Math.min(6, text.split("\n").length)
  return (
    <form className="composer" noValidate onSubmit={submit}>
      {replyTo === undefined ? null : (
        <section className="composer-note" aria-label={texts.replyingTo}>
          <p>
            <span className="muted">{texts.replyingTo}: </span>
            <strong>{senderName(replyTo, replyTo.direction === "out" ? botName : String(replyTo.user_id))}</strong>
            {replyTo.text === "" ? null : <> — <span className="excerpt">{replyTo.text}</span></>}
          </p>
          <button type="button" onClick={onCancelReply}>{texts.cancelReply}</button>
        </section>
      )}
      {file === undefined ? null : (
        <div className="composer-note">
          {preview === undefined ? null : <img src={preview} alt="" className="attachment-preview" />}
          <p className="excerpt">{texts.attached(file.name)}</p>
          <button type="button" onClick={() => {
            setFile(undefined)
            if (fileInput.current !== null) fileInput.current.value = ""
          }}>
            {texts.removeAttachment}
          </button>
        </div>
      )}
      <ErrorAlert error={send.error} />
      {canned.list}
      <div className="composer-row">
        <button type="button" className="icon-button" title={texts.attachFile} onClick={() => fileInput.current?.click()}>
          <svg aria-hidden="true" viewBox="0 0 24 24" width="18" height="18" fill="none" stroke="currentColor" strokeWidth="2"
            strokeLinecap="round" strokeLinejoin="round">
            <path d="m21.4 11.1-9.2 9.2a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8l8.5-8.5" />
          </svg>
          <span className="visually-hidden">{texts.attachFile}</span>
        </button>
        <input
          ref={fileInput}
          type="file"
          hidden
          onChange={(e) => {
            const picked = e.target.files?.[0]
            if (picked !== undefined) setFile(picked)
            send.reset()
          }}
        />
        <label htmlFor={id} className="visually-hidden">{texts.message}</label>
        <span id={id + "-hint"} className="visually-hidden">{texts.messageHint}</span>
        <textarea
          id={id}
          ref={textBox}
          rows={lines}
          value={text}
          placeholder={texts.messagePlaceholder}
          title={texts.messageHint}
          aria-describedby={id + "-hint"}
          onChange={(e) => setText(e.target.value)}
          {...canned.inputProps}
          onKeyDown={(e) => {
            if (canned.onKeyDown(e)) return
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault()
              submit()
            }
          }}
        />
        <button type="submit" className="primary" disabled={send.isPending}>
          {send.isPending ? <span aria-hidden="true">…</span> : null}
          {texts.send}
        </button>
      </div>
    </form>
  )
}
