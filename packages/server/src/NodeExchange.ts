import * as Http from "node:http"
import * as Https from "node:https"
import { Exchange } from "@botrelay/http"
import { HttpPost } from "@botrelay/telegram"
import { Effect, Layer } from "effect"

const failed = (phase: "request" | "answer", cause: unknown) =>
  new Exchange.ExchangeError({ phase, code: HttpPost.errorCode(cause) })

/**
 * The /tgapi proxy's whole-body calls on node:http / node:https over keep-alive connections: a
 * quarter of the CPU of the platform's `HttpClient` per call, which is most of the proxy's cost.
 * The call ends (and its connection is dropped) when the calling fiber is interrupted.
 */
export const make = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => ({ http: new Http.Agent({ keepAlive: true }), https: new Https.Agent({ keepAlive: true }) })),
    (agents) => Effect.sync(() => (agents.http.destroy(), agents.https.destroy()))
  ),
  (agents): Exchange.Service => ({
    exchange: ({ body, headers, method, url }, maxBytes) =>
      Effect.async<Exchange.Answer, Exchange.ExchangeError>((resume) => {
        let target: URL
        try {
          target = new URL(url)
        } catch (cause) {
          return resume(Effect.fail(failed("request", cause)))
        }
        let settled = false
        const settle = (result: Effect.Effect<Exchange.Answer, Exchange.ExchangeError>) => {
          if (settled) return
          settled = true
          resume(result)
        }
        const secure = target.protocol === "https:"
        const request = (secure ? Https : Http).request(
          target,
          {
            method,
            headers: body === undefined ? headers : { ...headers, "content-length": body.length },
            agent: secure ? agents.https : agents.http
          },
          (response) => {
            const chunks: Array<Buffer> = []
            let size = 0
            response.on("data", (chunk: Buffer) => {
              size += chunk.length
              if (size > maxBytes) {
                settle(Effect.fail(new Exchange.ExchangeError({ phase: "answer", code: undefined })))
                request.destroy()
                return
              }
              chunks.push(chunk)
            })
            response.on("error", (error) => settle(Effect.fail(failed("answer", error))))
            response.on("end", () => {
              const answerHeaders: Record<string, string> = {}
              for (const [name, value] of Object.entries(response.headers)) {
                if (value !== undefined) answerHeaders[name] = Array.isArray(value) ? value.join(", ") : value
              }
              settle(Effect.succeed({
                status: response.statusCode ?? 0,
                headers: answerHeaders,
                body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
              }))
            })
          }
        )
        request.on("error", (error) => settle(Effect.fail(failed("request", error))))
        request.end(body)
        return Effect.sync(() => {
          settled = true
          request.destroy()
        })
      })
  })
)

/** `Exchange` on node:http. */
export const layer: Layer.Layer<Exchange.Exchange> = Layer.scoped(Exchange.Exchange, make)
