import { Context, type Effect } from "effect"

/** A route the model may choose, described for it. */
export interface Candidate {
  readonly route_id: number
  /** The route's description and its `condition_value` hint. */
  readonly description: string
  readonly hint: string
  /** The target bot's name and description. */
  readonly target: string
}

/** One incoming message, as the model sees it: its text or caption. */
export interface Question {
  readonly source_bot: string
  readonly text: string
  readonly candidates: ReadonlyArray<Candidate>
}

/**
 * Chooses which `llm` routes fit a message, using an OpenAI-compatible chat-completions model. It
 * never fails: when the model is not configured, times out, fails or answers something that is not a
 * subset of the candidates, no llm route fires (and the reason is logged).
 */
export interface LlmRouterService {
  readonly choose: (question: Question) => Effect.Effect<ReadonlyArray<number>>
}

/** The LLM router. */
export class LlmRouter extends Context.Tag("@botrelay/core/LlmRouter")<LlmRouter, LlmRouterService>() {}
