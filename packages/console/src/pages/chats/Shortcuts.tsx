import { useEffect, useState } from "react"
import { Dialog } from "../../ui/Dialog"
import { useNotesTexts } from "./notesTexts"

/** Whether a key press belongs to a text field (or a dialog's control), not to the shortcuts. */
const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement &&
  (target.isContentEditable || target.closest("input, textarea, select, dialog") !== null)

/** Opens the chat `step` rows away from the open one in the chat list (the first when none is open). */
const moveChat = (step: 1 | -1) => {
  const links = [...document.querySelectorAll<HTMLAnchorElement>(".chat-rows a")]
  if (links.length === 0) return
  const current = links.findIndex((a) => a.getAttribute("aria-current") === "page")
  const next = current === -1 ? 0 : Math.min(links.length - 1, Math.max(0, current + step))
  links[next]!.click()
  links[next]!.focus()
}

/**
 * Keyboard shortcuts of the chats page, while focus is not in a text field: `?` opens the dialog `Keyboard
 * shortcuts` that lists them, `/` focuses the `Message` textbox, `j` / `k` open the next / previous chat.
 * `e` resolves the open chat (its `Resolve` button).
 */
export const Shortcuts = () => {
  const texts = useNotesTexts()
  const [open, setOpen] = useState(false)
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return
      switch (e.key) {
        case "?":
          e.preventDefault()
          setOpen(true)
          return
        case "/": {
          const box = document.querySelector<HTMLTextAreaElement>(".composer textarea")
          if (box === null) return
          e.preventDefault()
          box.focus()
          return
        }
        case "j":
          e.preventDefault()
          moveChat(1)
          return
        case "k":
          e.preventDefault()
          moveChat(-1)
          return
        case "e":
          document.querySelector<HTMLButtonElement>("button[data-shortcut='e']:not(:disabled)")?.click()
          return
      }
    }
    document.addEventListener("keydown", onKey)
    return () => document.removeEventListener("keydown", onKey)
  }, [])
  const keys: ReadonlyArray<readonly [string, string]> = [
    ["?", texts.shortcutHelp],
    ["/", texts.shortcutFocus],
    ["j", texts.shortcutNext],
    ["k", texts.shortcutPrevious],
    ["e", texts.shortcutResolve]
  ]
  return (
    <Dialog title={texts.shortcuts} open={open} onClose={() => setOpen(false)}>
      <dl className="shortcut-list">
        {keys.map(([key, what]) => (
          <div key={key}>
            <dt><kbd>{key}</kbd></dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <div className="dialog-actions">
        <button type="button" onClick={() => setOpen(false)}>{texts.close}</button>
      </div>
    </Dialog>
  )
}
