/** A Bot API error answer; the HTTP status is `error_code`. */
export interface Failure {
  readonly error_code: number
  readonly description: string
  readonly parameters?: { readonly retry_after?: number; readonly migrate_to_chat_id?: number }
}

/** What a Bot API call answers: a result, or a failure. */
export type Answer = { readonly ok: true; readonly result: unknown; readonly description?: string } | Failure

/** A failure with `error_code` and `description`. */
export const failure = (error_code: number, description: string): Failure => ({ error_code, description })

/** A 400 failure, described as Telegram does: `Bad Request: <description>`. */
export const badRequest = (description: string) => failure(400, `Bad Request: ${description}`)

/** The answer to an unknown route or method. */
export const notFound = failure(404, "Not Found")

/** The answer to an unknown or revoked token. */
export const unauthorized = failure(401, "Unauthorized")

/** A successful answer, with Telegram's optional `description`. */
export const ok = (result: unknown, description?: string): Answer =>
  description === undefined ? { ok: true, result } : { ok: true, result, description }

/** Whether a value is a failure rather than a result. */
export const isFailure = (value: unknown): value is Failure =>
  typeof value === "object" && value !== null && "error_code" in value && "description" in value

/** The HTTP status an answer goes out with. */
export const statusOf = (answer: Answer): number => ("ok" in answer ? 200 : answer.error_code)
