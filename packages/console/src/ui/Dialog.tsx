import { type ReactNode, useEffect, useId, useRef } from "react"

/**
 * A modal dialog on `<dialog>`: named by its title, closed by Escape (and `onClose`), focus returned to
 * what had it when it opened. `alert` makes it an `alertdialog` (confirmations).
 */
export const Dialog = ({ title, open, onClose, alert = false, children }: {
  readonly title: string
  readonly open: boolean
  readonly onClose: () => void
  readonly alert?: boolean
  readonly children: ReactNode
}) => {
  const ref = useRef<HTMLDialogElement>(null)
  const returnTo = useRef<HTMLElement | null>(null)
  const titleId = useId()
  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    if (open && !dialog.open) {
      returnTo.current = document.activeElement instanceof HTMLElement ? document.activeElement : null
      dialog.showModal()
    } else if (!open && dialog.open) {
      dialog.close()
      returnTo.current?.focus()
    }
  }, [open])
  useEffect(() => () => returnTo.current?.focus(), [])
  return (
    <dialog
      ref={ref}
      role={alert ? "alertdialog" : undefined}
      aria-labelledby={titleId}
      aria-modal="true"
      className="dialog"
      onCancel={(e) => {
        e.preventDefault()
        onClose()
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {open ? children : null}
    </dialog>
  )
}
