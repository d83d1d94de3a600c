import { HttpExchange } from "@botrelay/telegram"
import { Effect, Layer } from "effect"
import * as Http1Client from "./Http1Client.js"

/**
 * `HttpExchange` over a client's keep-alive connections; the call ends (its connection dropped) when its fiber
 * ends first, as it does when interrupted. The fiber is watched instead of registering an interruption handler
 * per call: a long poll keeps less while it waits, and a call makes less garbage.
 */
export const fromClient = (client: Http1Client.Client): HttpExchange.Service => ({
  exchange: (request) =>
    Effect.withFiberRuntime<HttpExchange.Answer, HttpExchange.HttpExchangeError>((fiber) =>
      Effect.async((resume) => {
        let answered = false
        const ended = () => cancel()
        const cancel = client.request(request, (failure, answer) => {
          answered = true
          fiber.removeObserver(ended)
          resume(failure === undefined ? Effect.succeed(answer!) : Effect.fail(failure))
        })
        if (!answered) fiber.addObserver(ended)
      })
    ),
  send: client.request
})

/**
 * Calls on node:net / node:tls through `Http1Client`: one request and no streams in between, a fraction
 * of the CPU of the platform's `HttpClient` or of node:http per call, which matters for getUpdates,
 * backend deliveries and the /tgapi proxy at thousands a second. The call ends when the calling fiber
 * is interrupted, when the timeout passes, or when the answer runs past `maxBytes`.
 */
export const make = Effect.map(
  Effect.acquireRelease(Effect.sync(() => Http1Client.make()), (client) => Effect.sync(client.close)),
  fromClient
)

/** `HttpExchange` on node:net. */
export const layer: Layer.Layer<HttpExchange.HttpExchange> = Layer.scoped(HttpExchange.HttpExchange, make)
