import { BotApi, TelegramClient, TelegramError } from "@botrelay/telegram"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { BotDisabled, BotNotFound, type StoredBot } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"
import {
  type ActionKind,
  type AdminRights,
  type AdminTitle,
  type BanMember,
  type ChatAdministrator,
  type ChatRef,
  type MemberRef,
  type MessageRef,
  type PinMessage,
  type PromoteMember,
  type RestrictMember,
  rightNames,
  type RightsGrant,
  type UnbanMember
} from "../domain/Moderation.js"
import * as SentMessages from "../runtime/SentMessages.js"
import { BotStore } from "../stores/BotStore.js"

/** Why an action fails: the bot, Telegram's refusal (its description passed on), or storage. */
export type ActionError =
  | BotNotFound
  | BotDisabled
  | TelegramError.TelegramApiError
  | TelegramError.TelegramTransportError
  | StorageError

/**
 * One moderation or chat-admin action: what is done, through which bot, in which chat, to which member or
 * message. Every action is described this way before it runs, so whatever keeps a record of actions (the
 * audit log, with the actor who asked) reads it in one place, `perform`.
 */
export interface Action {
  readonly kind: ActionKind
  readonly bot_id: number
  readonly chat_id: number
  readonly user_id?: number | undefined
  readonly message_id?: number | undefined
}

/** Moderation and chat administration through a bot; Telegram decides, and its refusals are passed on. */
export interface ChatAdminService {
  /** The chat's creator and administrators, as Telegram lists them. */
  readonly admins: (chat: ChatRef) => Effect.Effect<ReadonlyArray<ChatAdministrator>, ActionError>
  /** deleteMessage; the history marks the message deleted. */
  readonly deleteMessage: (input: MessageRef) => Effect.Effect<void, ActionError>
  /** pinChatMessage. */
  readonly pin: (input: PinMessage) => Effect.Effect<void, ActionError>
  /** unpinChatMessage. */
  readonly unpin: (input: MessageRef) => Effect.Effect<void, ActionError>
  /** banChatMember. */
  readonly ban: (input: BanMember) => Effect.Effect<void, ActionError>
  /** unbanChatMember. */
  readonly unban: (input: UnbanMember) => Effect.Effect<void, ActionError>
  /** restrictChatMember, with each permission meaning what it says (`use_independent_chat_permissions`). */
  readonly restrict: (input: RestrictMember) => Effect.Effect<void, ActionError>
  /** promoteChatMember with the rights given; the others are not granted. */
  readonly promote: (input: PromoteMember) => Effect.Effect<void, ActionError>
  /** promoteChatMember with every right false. */
  readonly demote: (input: MemberRef) => Effect.Effect<void, ActionError>
  /** setChatAdministratorCustomTitle. */
  readonly setTitle: (input: AdminTitle) => Effect.Effect<void, ActionError>
  /** leaveChat. */
  readonly leave: (input: ChatRef) => Effect.Effect<void, ActionError>
}

/** Moderation and chat administration through a bot. */
export class ChatAdmin extends Context.Tag("@botrelay/core/ChatAdmin")<ChatAdmin, ChatAdminService>() {}

/** A ChatMember of `getChatAdministrators`: the creator or an administrator, with whatever rights Telegram lists. */
const Administrator = Schema.Struct(
  {
    status: Schema.Literal("creator", "administrator"),
    user: BotApi.User,
    custom_title: Schema.optionalWith(Schema.String, { exact: true })
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
const decodeAdministrators = Schema.decodeUnknown(Schema.Array(Schema.Union(
  Administrator,
  Schema.Struct({ status: Schema.String })
)))

/** Every right as `value`. */
const allRights = (value: boolean) =>
  Object.fromEntries(rightNames.map((name) => [name, value])) as unknown as AdminRights

/** One administrator as the API lists them: the creator holds every right; absent rights are false. */
const administratorOf = (member: typeof Administrator.Type): ChatAdministrator => ({
  user_id: member.user.id,
  username: member.user.username ?? "",
  first_name: member.user.first_name,
  last_name: member.user.last_name ?? "",
  is_bot: member.user.is_bot,
  status: member.status,
  custom_title: member.custom_title ?? "",
  rights: member.status === "creator"
    ? { ...allRights(true), is_anonymous: member["is_anonymous"] === true }
    : Object.fromEntries(rightNames.map((name) => [name, member[name] === true])) as unknown as AdminRights
})

/** promoteChatMember's parameters for `rights`: each right named, false when not granted. */
const rightParams = (rights: RightsGrant): Record<string, boolean> =>
  Object.fromEntries(rightNames.map((name) => [name, rights[name] === true]))

const optionalParams = (params: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined))

/** Builds the service on the stores and the `TelegramClient` the host provides. */
export const make: Effect.Effect<ChatAdminService, never, BotStore | SentMessages.SentMessages | TelegramClient.TelegramClient> =
  Effect.gen(function*() {
    const botStore = yield* BotStore
    const sentMessages = yield* SentMessages.SentMessages
    const telegram = yield* TelegramClient.TelegramClient

    const usableBot = (id: number) =>
      botStore.findBot(id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(new BotNotFound({ id })), onSome: Effect.succeed })),
        Effect.filterOrFail((bot) => !bot.disabled, () => new BotDisabled({ id }))
      )

    /**
     * Every action passes through here: the bot is found (and must not be disabled), `run` makes the
     * Telegram call through it, and the outcome is the action's. A record of actions hooks in here.
     */
    const perform = <A>(
      action: Action,
      run: (bot: StoredBot) => Effect.Effect<A, ActionError>
    ): Effect.Effect<A, ActionError> =>
      usableBot(action.bot_id).pipe(
        Effect.flatMap(run),
        Effect.withSpan(`ChatAdmin.${action.kind}`, {
          attributes: { bot_id: action.bot_id, chat_id: action.chat_id }
        })
      )

    /** An action that is one Bot API call whose result is `true`. */
    const call = (action: Action, method: string, params: Readonly<Record<string, unknown>>) =>
      perform(action, (bot) => Effect.asVoid(telegram.call(bot.token, method, optionalParams(params))))

    const onMessage = (kind: ActionKind, input: MessageRef): Action => ({
      kind,
      bot_id: input.bot_id,
      chat_id: input.chat_id,
      message_id: input.message_id
    })

    const member = (kind: ActionKind, input: MemberRef): Action => ({
      kind,
      bot_id: input.bot_id,
      chat_id: input.chat_id,
      user_id: input.user_id
    })

    const promote = (kind: "promote" | "demote", input: MemberRef, rights: RightsGrant) =>
      call(member(kind, input), "promoteChatMember", {
        chat_id: input.chat_id,
        user_id: input.user_id,
        ...rightParams(rights)
      })

    return ChatAdmin.of({
      admins: (chat) =>
        usableBot(chat.bot_id).pipe(
          Effect.flatMap((bot) => telegram.call(bot.token, "getChatAdministrators", { chat_id: chat.chat_id })),
          Effect.flatMap((result) =>
            decodeAdministrators(result).pipe(
              Effect.mapError(() =>
                new TelegramError.TelegramTransportError({
                  reason: "Decode",
                  method: "getChatAdministrators",
                  description: "the answer is not a list of chat members"
                })
              )
            )
          ),
          Effect.map((members) =>
            members.flatMap((m) => "user" in m ? [administratorOf(m)] : [])
          ),
          Effect.withSpan("ChatAdmin.admins", { attributes: { bot_id: chat.bot_id, chat_id: chat.chat_id } })
        ),
      deleteMessage: (input) =>
        perform(onMessage("delete", input), (bot) =>
          telegram.deleteMessage(bot.token, { chat_id: input.chat_id, message_id: input.message_id }).pipe(
            Effect.zipRight(
              sentMessages.capture([{
                bot,
                method: "deletemessage",
                params: { chat_id: input.chat_id, message_id: input.message_id },
                result: true
              }], "api")
            )
          )),
      pin: (input) =>
        call(onMessage("pin", input), "pinChatMessage", {
          chat_id: input.chat_id,
          message_id: input.message_id,
          disable_notification: input.disable_notification
        }),
      unpin: (input) =>
        call(onMessage("unpin", input), "unpinChatMessage", { chat_id: input.chat_id, message_id: input.message_id }),
      ban: (input) =>
        call(member("ban", input), "banChatMember", {
          chat_id: input.chat_id,
          user_id: input.user_id,
          until_date: input.until_date,
          revoke_messages: input.revoke_messages
        }),
      unban: (input) =>
        call(member("unban", input), "unbanChatMember", {
          chat_id: input.chat_id,
          user_id: input.user_id,
          only_if_banned: input.only_if_banned
        }),
      restrict: (input) =>
        call(member("restrict", input), "restrictChatMember", {
          chat_id: input.chat_id,
          user_id: input.user_id,
          permissions: input.permissions,
          use_independent_chat_permissions: true,
          until_date: input.until_date
        }),
      promote: (input) => promote("promote", input, input.rights),
      demote: (input) => promote("demote", input, {}),
      setTitle: (input) =>
        call(member("admin_title", input), "setChatAdministratorCustomTitle", {
          chat_id: input.chat_id,
          user_id: input.user_id,
          custom_title: input.title
        }),
      leave: (input) => call({ kind: "leave", bot_id: input.bot_id, chat_id: input.chat_id }, "leaveChat", { chat_id: input.chat_id })
    })
  })

/** The service on the stores and the `TelegramClient` the host provides. */
export const layer: Layer.Layer<ChatAdmin, never, BotStore | SentMessages.SentMessages | TelegramClient.TelegramClient> = Layer
  .effect(ChatAdmin, make)
