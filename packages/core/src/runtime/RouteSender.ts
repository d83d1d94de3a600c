import { BotApi, TelegramClient, type TelegramError } from "@botrelay/telegram"
import {
  Clock,
  Data,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  FiberId,
  type ParseResult,
  Schema
} from "effect"
import { type StoredBot, userIdOf } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"
import { isUnreachable } from "../domain/Outgoing.js"
import { FloodControl } from "./FloodControl.js"
import type * as Outbox from "./Outbox.js"
import * as SentMessages from "./SentMessages.js"
import * as Resend from "./Resend.js"
import type { NewRouteMapping, RouteSend, SendOutcome } from "../domain/RouteSend.js"
import { OutboxStore } from "../stores/OutboxStore.js"

/** How long route evaluation waits for sends into a chat before it looks whether a message there is the service's. */
const fenceTimeout = Duration.seconds(5)

const decodeUpdate = Schema.decodeUnknownEither(Schema.parseJson(BotApi.Update))
const decodeSent = Schema.decodeUnknown(BotApi.Message)

/** Telegram's answers meaning the sending bot cannot see the message it was asked to forward or copy. */
const unseen = /message to (forward|copy) not found|chat not found|message not found|MESSAGE_ID_INVALID/i

const cannotSee = (e: TelegramError.TelegramError) =>
  e._tag === "TelegramApiError" && e.error_code === 400 && unseen.test(e.description)

/** A failure that is not Telegram's: the message or an answer could not be read, or the file is too large. */
class Unsendable extends Data.TaggedError("Unsendable")<{ readonly reason: string }> {}

const unreadable = (_: ParseResult.ParseError) => new Unsendable({ reason: "Telegram's answer could not be read" })

/** Failures worth trying again: no answer, Telegram's own trouble, or rate limits beyond the pacer's retries. */
const isTransient = (e: TelegramError.TelegramError | Unsendable): e is TelegramError.TelegramError =>
  e._tag === "TelegramTransportError" ||
  (e._tag === "TelegramApiError" && (e.error_code >= 500 || e.error_code === 429))

const describe = (e: TelegramError.TelegramError | Unsendable) =>
  e._tag === "Unsendable" ? e.reason : e._tag === "TelegramApiError" ? `${e.error_code} ${e.description}` : e.message

/** What an attempt at a send keeps for its recording: the messages it produced, and its fence in the target chat. */
interface Sent {
  readonly produced: ReadonlyArray<BotApi.Message>
  readonly done: Deferred.Deferred<void> | undefined
}

const outcomeOf = (outcome: Outbox.Outcome): SendOutcome =>
  outcome.status === "done" ? { status: "sent", at: outcome.at } : outcome

/**
 * Route sends, the outbox kind: a bot's sends made through Telegram, with their content sent again when
 * needed; `quiet` is the fence route evaluation waits on.
 */
export const make = Effect.gen(function*() {
  const sentMessages = yield* SentMessages.SentMessages
  const outbox = yield* OutboxStore
  const telegram = yield* TelegramClient.TelegramClient
  const flood = yield* FloodControl
  /** Per chat, the sends handed to Telegram whose outcome is not recorded yet. */
  const sending = new Map<number, Set<Deferred.Deferred<void>>>()

  const track = (chatId: number, done: Deferred.Deferred<void>) =>
    Effect.sync(() => {
      const inChat = sending.get(chatId)
      if (inChat === undefined) sending.set(chatId, new Set([done]))
      else inChat.add(done)
    })

  const untrack = (chatId: number, done: Deferred.Deferred<void>) =>
    Effect.suspend(() => {
      const inChat = sending.get(chatId)
      inChat?.delete(done)
      if (inChat?.size === 0) sending.delete(chatId)
      return Deferred.done(done, Exit.void)
    })

  /**
   * Waits (at most 5 s) for the sends into the chat that Telegram may already have answered: once they
   * are recorded, a message there that one of them produced is known as the service's.
   */
  const quiet = (chatId: number): Effect.Effect<void> =>
    Effect.suspend(() => {
      const inChat = sending.get(chatId)
      return inChat === undefined
        ? Effect.void
        : Effect.forEach([...inChat], Deferred.await, { discard: true }).pipe(
          Effect.timeout(fenceTimeout),
          Effect.ignore
        )
    })

  /**
   * One attempt at a send: the job, its bots and message, its calls into the target chat (paced and tracked),
   * and the messages it has produced so far.
   */
  interface Attempt {
    readonly job: RouteSend
    readonly sender: StoredBot
    readonly receiver: StoredBot
    readonly message: BotApi.Message
    readonly produced: Array<BotApi.Message>
    readonly paced: <A>(
      call: Effect.Effect<A, TelegramError.TelegramError>
    ) => Effect.Effect<A, TelegramError.TelegramError>
  }

  const replyParameters = (job: RouteSend) =>
    job.reply_to_message_id === 0
      ? {}
      : { reply_parameters: { message_id: job.reply_to_message_id, allow_sending_without_reply: true } }

  /** The message's content, sent by the sender itself: the sender's line first unless it is a reply going back. */
  const resend = ({ job, message, paced, produced, receiver, sender }: Attempt) =>
    Effect.gen(function*() {
      const content = Resend.contentOf(message)
      const header = job.kind === "reply" ? undefined : Resend.headerOf(message)
      const reply = replyParameters(job)
      const call = (method: string, params: Record<string, unknown>) =>
        paced(telegram.call(sender.token, method, { chat_id: job.chat_id, ...params }))
      const sendText = (text: Resend.Formatted, withReply: boolean) =>
        call("sendMessage", { text: text.text, entities: text.entities, ...(withReply ? reply : {}) }).pipe(
          Effect.flatMap((result) => Effect.mapError(decodeSent(result), unreadable)),
          Effect.map((m) => void produced.push(m))
        )

      switch (content._tag) {
        case "Text": {
          const text = header === undefined ? content.text : Resend.prefixed(header, content.text, Resend.textLimit)
          if (text === undefined) {
            yield* sendText(header!, false)
            yield* sendText(content.text, true)
          } else yield* sendText(text, true)
          break
        }
        case "Unsupported": {
          if (header === undefined) {
            return yield* new Unsendable({ reason: "the message has no text or media to send" })
          }
          const note = { text: "(a message Botrelay cannot send again)", entities: [] }
          yield* sendText(Resend.prefixed(header, note, Resend.textLimit) ?? header, true)
          break
        }
        case "Media": {
          if (content.file_size !== undefined && content.file_size > Resend.maxFileBytes) {
            return yield* new Unsendable({ reason: `the file is larger than ${Resend.maxFileBytes} bytes` })
          }
          const file = yield* telegram.getFile(receiver.token, { file_id: content.file_id })
          if (file.file_path === undefined) return yield* new Unsendable({ reason: "Telegram gave no file path" })
          const bytes = yield* telegram.download(receiver.token, file.file_path, Resend.maxFileBytes)
          const caption = content.caption === undefined || header === undefined
            ? content.caption
            : Resend.prefixed(header, content.caption, Resend.captionLimit)
          if (header !== undefined && caption === undefined) yield* sendText(header, false)
          const upload = {
            field: content.field,
            filename: Resend.fileNameOf(content, file.file_path),
            contentType: content.mime_type,
            bytes
          }
          const params = {
            chat_id: job.chat_id,
            ...(caption === undefined || caption.text === ""
              ? {}
              : { caption: caption.text, caption_entities: caption.entities }),
            ...reply
          }
          const result = yield* paced(telegram.upload(sender.token, content.method, params, upload))
          produced.push(yield* Effect.mapError(decodeSent(result), unreadable))
          break
        }
      }
    })

  /** forwardMessage or copyMessage as the route says; a reply going back is a copy replying to the original. */
  const pass = ({ job, message, paced, produced, sender }: Attempt) => {
    const from = { chat_id: job.chat_id, from_chat_id: job.from_chat_id, message_id: job.message_id }
    if (job.kind === "forward") {
      return paced(telegram.forwardMessage(sender.token, from)).pipe(Effect.map((m) => void produced.push(m)))
    }
    return paced(telegram.copyMessage(sender.token, { ...from, ...replyParameters(job) })).pipe(
      Effect.flatMap((id) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          produced.push(copyOf(message, id.message_id, job, sender, now))
        })
      )
    )
  }

  /** The copy as its chat holds it: the original's text or media from the sender, replying as the job says. */
  const copyOf = (
    original: BotApi.Message,
    messageId: number,
    job: RouteSend,
    sender: StoredBot,
    now: number
  ): BotApi.Message => {
    const { caption, caption_entities, entities, text } = original
    const chat = { id: job.chat_id, type: job.chat_id < 0 ? "group" : "private" }
    const date = Math.floor(now / 1000)
    return {
      ...Resend.mediaFields(original),
      ...(text === undefined ? {} : { text, entities }),
      ...(caption === undefined ? {} : { caption, caption_entities }),
      message_id: messageId,
      chat,
      from: { id: userIdOf(sender), is_bot: true, first_name: sender.name, username: sender.username },
      date,
      ...(job.reply_to_message_id === 0
        ? {}
        : { reply_to_message: { message_id: job.reply_to_message_id, chat, date } })
    }
  }

  /**
   * Passes the message on, or sends its content again when the sender cannot see its chat: always for a
   * private chat of another bot, else when Telegram says so.
   */
  const attempt = (attempt: Omit<Attempt, "message">, payload: string): Effect.Effect<
    void,
    TelegramError.TelegramError | Unsendable
  > =>
    Effect.gen(function*() {
      if (payload === "") return yield* new Unsendable({ reason: "the update is no longer stored" })
      const update = decodeUpdate(payload)
      const message = Either.isRight(update) ? update.right.message ?? update.right.channel_post : undefined
      if (message === undefined) return yield* new Unsendable({ reason: "the message could not be read" })
      const ready = { ...attempt, message }
      return yield* (message.chat.type === "private" && attempt.job.bot_id !== attempt.job.source_bot_id
        ? resend(ready)
        : pass(ready).pipe(Effect.catchIf(cannotSee, () => resend(ready))))
    })

  const mappingsOf = (job: RouteSend, sent: ReadonlyArray<BotApi.Message>, at: string): Array<NewRouteMapping> =>
    sent.map((m) => ({
      route_id: job.route_id,
      source_bot_id: job.source_bot_id,
      source_chat_id: job.from_chat_id,
      source_message_id: job.message_id,
      target_bot_id: job.bot_id,
      target_chat_id: job.chat_id,
      target_message_id: m.message_id,
      hop: job.hop,
      reversible: job.kind !== "reply",
      created_at: at
    }))

  /**
   * Sends one job by its sender, capturing every message it produced (also when a later message of the
   * same attempt failed) in the sender's history. Once Telegram has answered, the rest completes even
   * when the runtime is stopping.
   */
  const attemptOne = (
    job: RouteSend,
    sender: StoredBot,
    bots: Outbox.Bots,
    interruptible: Outbox.Interruptible
  ): Effect.Effect<Outbox.Attempt<Sent>, StorageError> => {
    const receiver = bots(job.source_bot_id)
    if (receiver === undefined) {
      return Effect.succeed({
        _tag: "Failed",
        extra: { produced: [], done: undefined },
        error: "the receiving bot is gone",
        retry: "never"
      })
    }
    const done = Deferred.unsafeMake<void>(FiberId.none)
    const paced = <A>(call: Effect.Effect<A, TelegramError.TelegramError>) =>
      flood.send(sender.id, job.chat_id, Effect.zipRight(track(job.chat_id, done), call))
    const produced: Array<BotApi.Message> = []
    return Effect.gen(function*() {
      const result = yield* Effect.either(interruptible(attempt({ job, sender, receiver, paced, produced }, job.payload)))
      yield* sentMessages.captureSent(sender, produced, "route")
      const extra = { produced, done }
      if (Either.isRight(result)) {
        if (produced.length > 0) yield* sentMessages.setReachable(sender.id, job.chat_id, undefined)
        return { _tag: "Done", extra } as const
      }
      const error = result.left
      if (error._tag === "TelegramApiError" && isUnreachable(error.error_code, error.description)) {
        const since = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        yield* sentMessages.setReachable(sender.id, job.chat_id, { since, reason: error.description })
      }
      return {
        _tag: "Failed",
        extra,
        error: describe(error),
        retry: isTransient(error) ? "later" : "never",
        retryAfter: error._tag === "TelegramApiError" && error.retry_after !== undefined
          ? Duration.seconds(error.retry_after)
          : undefined
      } as const
    }).pipe(Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : untrack(job.chat_id, done)))
  }

  /** Records a send's outcome with a mapping for every message it produced, then opens its fence. */
  const record = ({ extra, job, outcome }: Outbox.Recorded<RouteSend, Sent>) =>
    outbox.recordSend(job.id, outcomeOf(outcome), mappingsOf(job, extra.produced, outcome.at)).pipe(
      Effect.ensuring(extra.done === undefined ? Effect.void : untrack(job.chat_id, extra.done))
    )

  const kind: Outbox.Kind<RouteSend, Sent> = {
    name: "route send",
    metric: "route",
    line: outbox.nextSends,
    runs: (sender) => !sender.disabled,
    attempt: attemptOne,
    record: (recorded) => Effect.forEach(recorded, record, { discard: true }),
    recordEach: true,
    annotations: (job) => ({ send_id: job.id, route_id: job.route_id })
  }

  return { kind, quiet } as const
})
