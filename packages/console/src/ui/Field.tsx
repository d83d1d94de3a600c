import { type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes, useId } from "react"

interface Labelled {
  readonly label: string
  /** The API's sentence about this field: marks it invalid and describes it. */
  readonly error?: string | undefined
  readonly hint?: ReactNode
}

const described = (error: string | undefined, errorId: string) =>
  error === undefined ? {} : { "aria-invalid": true as const, "aria-describedby": errorId }

const FieldError = ({ id, error }: { readonly id: string; readonly error: string | undefined }) =>
  error === undefined ? null : <p id={id} className="field-error">{error}</p>

/** A labelled input; `error` shows the API's sentence at the field. */
export const TextField = ({ label, error, hint, ...input }: Labelled & InputHTMLAttributes<HTMLInputElement>) => {
  const id = useId()
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} {...input} {...described(error, id + "-error")} />
      {hint === undefined ? null : <p className="field-hint">{hint}</p>}
      <FieldError id={id + "-error"} error={error} />
    </div>
  )
}

export const TextAreaField = ({ label, error, hint, ...input }: Labelled & TextareaHTMLAttributes<HTMLTextAreaElement>) => {
  const id = useId()
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} {...input} {...described(error, id + "-error")} />
      {hint === undefined ? null : <p className="field-hint">{hint}</p>}
      <FieldError id={id + "-error"} error={error} />
    </div>
  )
}

export const SelectField = ({ label, error, hint, children, ...select }: Labelled & SelectHTMLAttributes<HTMLSelectElement>) => {
  const id = useId()
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} {...select} {...described(error, id + "-error")}>{children}</select>
      {hint === undefined ? null : <p className="field-hint">{hint}</p>}
      <FieldError id={id + "-error"} error={error} />
    </div>
  )
}

export const CheckboxField = ({ label, error, ...input }: Labelled & InputHTMLAttributes<HTMLInputElement>) => {
  const id = useId()
  return (
    <div className="field field-check">
      <input id={id} type="checkbox" {...input} {...described(error, id + "-error")} />
      <label htmlFor={id}>{label}</label>
      <FieldError id={id + "-error"} error={error} />
    </div>
  )
}
