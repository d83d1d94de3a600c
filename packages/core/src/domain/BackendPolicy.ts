import { IpAddress } from "@botrelay/telegram"
import { Context, Schema } from "effect"

/** Who set a bot's `backend_url`: an admin through /api, or a token holder through /tgapi `setWebhook`. */
export const BackendUrlOrigin = Schema.Literal("api", "tgapi")
export type BackendUrlOrigin = typeof BackendUrlOrigin.Type

/** Which addresses backend URLs may reach. */
export interface Policy {
  /** `strict`: URLs an admin set must reach public addresses too, as URLs set through /tgapi always must. */
  readonly mode: "default" | "strict"
  /** Any URL may reach loopback, private, link-local and this host's own addresses, whoever set it. */
  readonly allowPrivate: boolean
}

/** The backend-URL policy of the instance: `default` mode, private addresses refused for /tgapi URLs. */
export class BackendPolicy extends Context.Reference<BackendPolicy>()("@botrelay/core/BackendPolicy", {
  defaultValue: (): Policy => ({ mode: "default", allowPrivate: false })
}) {}

/**
 * Who counts as having set the bot's backend URL once `url` is set from `origin`: `origin` when the URL
 * changes; setting the URL the bot already has keeps its origin.
 */
export const originAfter = (
  bot: { readonly backend_url: string; readonly backend_url_origin: BackendUrlOrigin },
  url: string,
  origin: BackendUrlOrigin
): BackendUrlOrigin => url === bot.backend_url ? bot.backend_url_origin : origin

/** Whether a URL set from `origin` may only reach public addresses that are not this host's own. */
export const publicOnly = (policy: Policy, origin: BackendUrlOrigin): boolean =>
  !policy.allowPrivate && (origin === "tgapi" || policy.mode === "strict")

/** The `addresses` policy of calls to a backend URL set from `origin`. */
export const addressesFor = (policy: Policy, origin: BackendUrlOrigin): "public" | undefined =>
  publicOnly(policy, origin) ? "public" : undefined

/**
 * Why the URL is refused before any connection, when it must reach public addresses only: its host is
 * an IP address that is not public ("IP address 127.0.0.1 is reserved (loopback)") or `localhost`.
 * `undefined` otherwise; other host names are checked on their resolved address when connecting.
 */
export const literalRefusal = (url: string): string | undefined => {
  if (!URL.canParse(url)) return undefined
  const hostname = new URL(url).hostname
  if (IpAddress.isLocalhostName(hostname)) return `${hostname} is reserved (loopback)`
  const address = IpAddress.ofUrlHost(hostname)
  if (address === undefined) return undefined
  const kind = IpAddress.kind(address)
  return kind === undefined || kind === "public" ? undefined : `IP address ${address} is reserved (${kind})`
}
