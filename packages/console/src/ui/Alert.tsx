import { ApiFailure } from "../api/client"
import { useCommonTexts } from "../texts"

/** A form- or page-level error in words, announced (`role=alert`); nothing when there is none. */
export const ErrorAlert = ({ error }: { readonly error: unknown }) => {
  const texts = useCommonTexts()
  if (error === null || error === undefined) return null
  return <p role="alert" className="alert">{describe(error, texts.networkError)}</p>
}

/** The sentence to show for a failure: the API's own, or the network failure in words. */
export const describe = (error: unknown, networkError: string) =>
  error instanceof ApiFailure ? (error.status === 0 ? networkError : error.message) : String(error)

/**
 * Splits an API failure between the form's fields: each named field gets its sentence, and the
 * form-level alert gets what no field took.
 */
export const fieldErrors = <F extends string>(error: unknown, fields: ReadonlyArray<F>) => {
  const byField: Partial<Record<F, string>> = {}
  if (!(error instanceof ApiFailure)) return { byField, rest: error ?? undefined }
  for (const field of fields) {
    const message = error.fieldMessage(field)
    if (message !== undefined) byField[field] = message
  }
  return { byField, rest: Object.keys(byField).length > 0 ? undefined : error }
}
