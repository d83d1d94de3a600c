import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type KeyboardEvent, type RefObject, useEffect, useId, useState } from "react"
import { api, unwrap } from "../../api/client"
import { ErrorAlert, fieldErrors } from "../../ui/Alert"
import { Dialog } from "../../ui/Dialog"
import { TextAreaField, TextField } from "../../ui/Field"
import { noteKeys, useCannedReplies } from "./notes"
import { useNotesTexts } from "./notesTexts"

const slash = /^\/([a-z0-9_-]*)$/

/**
 * `/` in the `Message` textbox: while the text is `/` and a code's beginning, a listbox `Canned replies`
 * offers the replies whose code starts so; Arrow keys move, Enter, Tab or a click inserts the reply filled for
 * the chat (`/api/canned-replies/render`), Escape closes the list. `onKeyDown` returns whether it took the key.
 */
export const useCannedPicker = ({ botId, chatId, text, setText, textBox }: {
  readonly botId: number
  readonly chatId: number
  readonly text: string
  readonly setText: (text: string) => void
  readonly textBox: RefObject<HTMLTextAreaElement | null>
}) => {
  const texts = useNotesTexts()
  const listId = useId()
  const prefix = slash.exec(text)?.[1]
  const [dismissed, setDismissed] = useState<string | undefined>(undefined)
  const [active, setActive] = useState(0)
  const open = prefix !== undefined && dismissed !== text
  const replies = useCannedReplies(open ? botId : undefined)
  const offered = open ? (replies.data ?? []).filter((r) => r.code.startsWith(prefix)) : []
  useEffect(() => setActive(0), [prefix])
  const render = useMutation({
    mutationFn: (code: string) =>
      unwrap(api.GET("/api/canned-replies/render", {
        params: { query: { code, bot_id: String(botId), chat_id: String(chatId) } }
      })),
    onSuccess: (rendered) => {
      setText(rendered.text)
      textBox.current?.focus()
    }
  })
  const pick = (code: string) => render.mutate(code)
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (!open) return false
    if (e.key === "Escape") {
      e.preventDefault()
      setDismissed(text)
      return true
    }
    if (offered.length === 0) return false
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault()
      setActive((i) => (i + (e.key === "ArrowDown" ? 1 : offered.length - 1)) % offered.length)
      return true
    }
    if ((e.key === "Enter" && !e.shiftKey) || e.key === "Tab") {
      e.preventDefault()
      pick(offered[Math.min(active, offered.length - 1)]!.code)
      return true
    }
    return false
  }
  const optionId = (i: number) => `${listId}-${i}`
  const list = !open ? null : (
    <div className="canned-picker">
      <ul role="listbox" id={listId} aria-label={texts.cannedReplies}>
        {offered.map((reply, i) => (
          <li
            key={reply.id}
            id={optionId(i)}
            role="option"
            aria-selected={i === active}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => pick(reply.code)}
          >
            <span className="canned-code">/{reply.code}</span>
            <span className="canned-text muted">{reply.text}</span>
          </li>
        ))}
      </ul>
      {replies.isSuccess && offered.length === 0 ? <p className="muted">{texts.noCannedReplies}</p> : null}
      <ErrorAlert error={render.error ?? replies.error} />
    </div>
  )
  const inputProps = open
    ? {
      "aria-controls": listId,
      "aria-expanded": true,
      ...(offered.length > 0 ? { "aria-activedescendant": optionId(Math.min(active, offered.length - 1)) } : {})
    }
    : {}
  return { list, onKeyDown, inputProps }
}

/** Dialog `Canned replies`: the team's replies (each with `Delete`), and `Code` + `Text` + `Save` to add one. */
export const CannedRepliesDialog = ({ open, onClose }: { readonly open: boolean; readonly onClose: () => void }) => {
  const texts = useNotesTexts()
  const client = useQueryClient()
  const replies = useCannedReplies(undefined)
  const [code, setCode] = useState("")
  const [text, setText] = useState("")
  const reload = () => client.invalidateQueries({ queryKey: noteKeys.allCanned })
  const add = useMutation({
    mutationFn: () => unwrap(api.POST("/api/canned-replies/add", { body: { code, text } })),
    onSuccess: () => {
      setCode("")
      setText("")
      return reload()
    }
  })
  const remove = useMutation({
    mutationFn: (id: number) => unwrap(api.POST("/api/canned-replies/delete", { params: { query: { id: String(id) } } })),
    onSuccess: reload
  })
  const errors = fieldErrors(add.error, ["code", "text"])
  return (
    <Dialog title={texts.cannedReplies} open={open} onClose={onClose}>
      <p className="muted">{texts.codeHint}</p>
      <ul className="canned-list" aria-label={texts.cannedReplies}>
        {(replies.data ?? []).map((reply) => (
          <li key={reply.id}>
            <span className="canned-code">/{reply.code}</span>
            <span className="canned-text">{reply.text}</span>
            <button type="button" aria-label={`${texts.delete} /${reply.code}`} onClick={() => remove.mutate(reply.id)}>
              {texts.delete}
            </button>
          </li>
        ))}
      </ul>
      <ErrorAlert error={remove.error ?? replies.error} />
      <form noValidate onSubmit={(e) => {
        e.preventDefault()
        add.mutate()
      }}>
        <TextField label={texts.code} value={code} onChange={(e) => setCode(e.target.value)} error={errors.byField.code} />
        <TextAreaField label={texts.text} value={text} rows={3} onChange={(e) => setText(e.target.value)} error={errors.byField.text} />
        <ErrorAlert error={errors.rest} />
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={add.isPending}>{texts.save}</button>
          <button type="button" onClick={onClose}>{texts.close}</button>
        </div>
      </form>
    </Dialog>
  )
}
