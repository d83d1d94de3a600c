import { Data, Schema } from "effect"

/** One field that failed validation: where, and why. */
export const FieldIssue = Schema.Struct({ path: Schema.String, message: Schema.String })
export type FieldIssue = typeof FieldIssue.Type

/** Input that is well-formed but breaks a rule spanning several fields or records. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  details: Schema.Array(FieldIssue)
}) {
  override get message() {
    return this.details.map((d) => `${d.path}: ${d.message}`).join("; ")
  }
  /** An `InvalidInput` about one field. */
  static field(path: string, message: string) {
    return new InvalidInput({ details: [{ path, message }] })
  }
}

/** The storage failed; the cause stays internal and never reaches a client. */
export class StorageError extends Data.TaggedError("StorageError")<{
  readonly operation: string
  readonly cause: unknown
}> {
  override get message() {
    return `storage failure during ${this.operation}`
  }
}

/** This instance no longer holds the bot's lease (another instance took it over): its commit was refused. */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{ readonly bot_id: number }> {
  override get message() {
    return `this instance no longer holds the lease of bot ${this.bot_id}`
  }
}
