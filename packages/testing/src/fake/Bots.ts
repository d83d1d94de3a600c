import { randomInt } from "node:crypto"
import { ok, unauthorized } from "./Answer.js"
import { type Bot, botOf, type Handler, makeToken, type State } from "./State.js"
import type { FakeBot } from "./Types.js"
import { endPoll } from "./Updates.js"

const view = (bot: Bot): FakeBot => ({ id: bot.id, token: bot.token, username: bot.username, first_name: bot.first_name })

/** A new bot with a fresh token. */
export const addBot = (
  state: State,
  options: { readonly username?: string; readonly first_name?: string }
): FakeBot => {
  const n = state.nextBot++
  const id = 7_000_000_000 + n
  const username = options.username ?? `fake${n}_bot`
  const first_name = options.first_name ?? `Fake Bot ${n}`
  const bot: Bot = {
    id,
    token: makeToken(id),
    username,
    first_name,
    user: { id, is_bot: true, first_name, username },
    nextUpdateId: 100_000_000 + randomInt(0, 100_000_000),
    queue: [],
    confirmed: [],
    allowed: [],
    poll: undefined,
    webhook: undefined,
    lastError: undefined,
    delivery: undefined
  }
  state.botsByToken.set(bot.token, bot)
  state.botsById.set(id, bot)
  return view(bot)
}

/** Replaces a bot's token, as BotFather's /revoke does: the old one gets 401 from now on. */
export const revoke = (state: State, botId: number): FakeBot => {
  const bot = botOf(state, botId)
  state.botsByToken.delete(bot.token)
  bot.token = makeToken(bot.id)
  state.botsByToken.set(bot.token, bot)
  endPoll(bot, unauthorized)
  return view(bot)
}

/** The bot methods. */
export const botMethods: Readonly<Record<string, Handler>> = {
  getMe: (bot) =>
    ok({
      ...bot.user,
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false
    })
}
