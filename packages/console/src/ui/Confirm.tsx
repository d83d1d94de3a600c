import { useState } from "react"
import { useCommonTexts } from "../texts"
import { ErrorAlert } from "./Alert"
import { Dialog } from "./Dialog"

/**
 * An `alertdialog` named after the action, with the action's button and `Cancel`; the action runs on
 * confirmation and the dialog stays open with the API's error when it fails.
 */
export const Confirm = ({ title, action, body, open, onClose, onConfirm, danger = true }: {
  readonly title: string
  readonly action: string
  readonly body?: string
  readonly open: boolean
  readonly onClose: () => void
  readonly onConfirm: () => Promise<unknown>
  readonly danger?: boolean
}) => {
  const texts = useCommonTexts()
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  const close = () => {
    setError(undefined)
    onClose()
  }
  return (
    <Dialog title={title} open={open} onClose={close} alert>
      {body === undefined ? null : <p>{body}</p>}
      <ErrorAlert error={error} />
      <div className="dialog-actions">
        <button
          type="button"
          className={danger ? "danger" : "primary"}
          disabled={busy}
          onClick={() => {
            setBusy(true)
            onConfirm().then(close, setError).finally(() => setBusy(false))
          }}
        >
          {action}
        </button>
        <button type="button" onClick={close} autoFocus>{texts.cancel}</button>
      </div>
    </Dialog>
  )
}
