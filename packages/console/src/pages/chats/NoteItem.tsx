import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useId, useState } from "react"
import { api, unwrap } from "../../api/client"
import { useFormatTime } from "../../i18n"
import { useAccount } from "../../session"
import { ErrorAlert } from "../../ui/Alert"
import { type Note, noteKeys } from "./notes"
import { useNotesTexts } from "./notesTexts"

/**
 * A private note in the log, styled apart from messages: role `note` named "Private note by <author>",
 * with `Edit note` and `Delete note` for its author (`Delete note` for admins too).
 */
export const NoteItem = ({ note }: { readonly note: Note }) => {
  const texts = useNotesTexts()
  const formatTime = useFormatTime()
  const account = useAccount()
  const client = useQueryClient()
  const [editing, setEditing] = useState(false)
  const [text, setText] = useState(note.text)
  const id = useId()
  const reload = () => client.invalidateQueries({ queryKey: noteKeys.notes(note.bot_id, note.chat_id) })
  const save = useMutation({
    mutationFn: (value: string) => unwrap(api.POST("/api/notes/update", { body: { id: note.id, text: value } })),
    onSuccess: () => {
      setEditing(false)
      return reload()
    }
  })
  const remove = useMutation({
    mutationFn: () => unwrap(api.POST("/api/notes/delete", { params: { query: { id: String(note.id) } } })),
    onSuccess: reload
  })
  const mine = note.author_id === account.id
  return (
    <div role="note" aria-label={texts.noteBy(note.author_name)} className="note-item">
      <p className="note-item-head">
        <span className="note-item-badge">{texts.privateNote}</span>
        <strong>{note.author_name}</strong>
        <span className="muted">
          {" "}· {formatTime(note.created_at)}{note.updated_at !== note.created_at ? ` · ${texts.edited}` : ""}
        </span>
      </p>
      {editing
        ? (
          <form noValidate onSubmit={(e) => {
            e.preventDefault()
            save.mutate(text)
          }}>
            <label htmlFor={id} className="visually-hidden">{texts.editNote}</label>
            <textarea id={id} value={text} rows={3} onChange={(e) => setText(e.target.value)} />
            <ErrorAlert error={save.error} />
            <div className="note-item-actions">
              <button type="submit" className="primary" disabled={save.isPending}>{texts.saveNote}</button>
              <button type="button" onClick={() => setEditing(false)}>{texts.cancel}</button>
            </div>
          </form>
        )
        : <p className="note-item-text">{note.text}</p>}
      <ErrorAlert error={remove.error} />
      {editing || !(mine || account.role === "admin") ? null : (
        <div className="note-item-actions">
          {mine ? <button type="button" onClick={() => {
            setText(note.text)
            setEditing(true)
          }}>{texts.editNote}</button> : null}
          <button type="button" onClick={() => remove.mutate()} disabled={remove.isPending}>{texts.deleteNote}</button>
        </div>
      )}
    </div>
  )
}

/** textbox `Note` and button `Add note`: a private note in the chat, never sent to Telegram. */
export const NoteComposer = ({ botId, chatId }: { readonly botId: number; readonly chatId: number }) => {
  const texts = useNotesTexts()
  const client = useQueryClient()
  const [text, setText] = useState("")
  const id = useId()
  const add = useMutation({
    mutationFn: (value: string) => unwrap(api.POST("/api/notes/add", { body: { bot_id: botId, chat_id: chatId, text: value } })),
    onSuccess: () => {
      setText("")
      return client.invalidateQueries({ queryKey: noteKeys.notes(botId, chatId) })
    }
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    if (text.trim() !== "" && !add.isPending) add.mutate(text)
  }
  return (
    <form className="note-composer" noValidate onSubmit={submit}>
      <label htmlFor={id} className="visually-hidden">{texts.note}</label>
      <textarea
        id={id}
        rows={1}
        value={text}
        placeholder={texts.privateNote}
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit" disabled={add.isPending}>{texts.addNote}</button>
      <ErrorAlert error={add.error} />
    </form>
  )
}
