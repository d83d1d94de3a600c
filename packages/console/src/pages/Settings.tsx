import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { api, type Schemas, unwrap } from "../api/client"
import { defineTexts } from "../i18n"
import { useCommonTexts } from "../texts"
import { ErrorAlert, fieldErrors } from "../ui/Alert"
import { CheckboxField, TextField } from "../ui/Field"

const useTexts = defineTexts({
  title: "Settings",
  llm: "LLM router",
  llmIntro: "Routes with the condition “llm” ask an OpenAI-compatible model whether an update matches.",
  baseUrl: "Base URL",
  baseUrlHint: "The API root, such as https://api.openai.com/v1. Leave blank to unset it.",
  model: "Model",
  modelHint: "Such as gpt-4o-mini.",
  apiKey: "API key",
  keySet: "A key is set; it is never shown. Leave the field blank to keep it.",
  keyUnset: "No key is set; requests are sent without one.",
  removeKey: "Clear the stored key",
  timeout: "Timeout (ms)",
  timeoutHint: "How long to wait for the model, from 100 to 60000.",
  configured: "The router is configured: llm routes are evaluated.",
  notConfigured: "The router is not configured: llm routes never match until Base URL and Model are set.",
  fixed: "Set by the server's environment (BOTRELAY_LLM_…); it cannot be changed here.",
  saved: "Settings saved.",
  nothingChanged: "Nothing changed.",
  saving: "Saving…"
}, {
  title: "Настройки",
  llm: "LLM-маршрутизатор",
  llmIntro: "Маршруты с условием «llm» спрашивают совместимую с OpenAI модель, подходит ли обновление.",
  baseUrl: "Базовый URL",
  baseUrlHint: "Корень API, например https://api.openai.com/v1. Оставьте пустым, чтобы убрать.",
  model: "Модель",
  modelHint: "Например, gpt-4o-mini.",
  apiKey: "Ключ API",
  keySet: "Ключ задан; он никогда не показывается. Оставьте поле пустым, чтобы не менять его.",
  keyUnset: "Ключ не задан; запросы отправляются без него.",
  removeKey: "Удалить сохранённый ключ",
  timeout: "Тайм-аут (мс)",
  timeoutHint: "Сколько ждать ответа модели, от 100 до 60000.",
  configured: "Маршрутизатор настроен: маршруты llm проверяются.",
  notConfigured: "Маршрутизатор не настроен: маршруты llm не срабатывают, пока не заданы базовый URL и модель.",
  fixed: "Задано окружением сервера (BOTRELAY_LLM_…); здесь не меняется.",
  saved: "Настройки сохранены.",
  nothingChanged: "Ничего не изменилось.",
  saving: "Сохранение…"
})

const llmKey = ["llm"] as const

type Settings = Schemas["LlmSettings"]
type Update = Schemas["LlmSettingsUpdate"]
type Field = "base_url" | "model" | "api_key" | "timeout_ms"
const fields: ReadonlyArray<Field> = ["base_url", "model", "api_key", "timeout_ms"]

const SettingsForm = ({ settings }: { readonly settings: Settings }) => {
  const texts = useTexts()
  const common = useCommonTexts()
  const client = useQueryClient()
  const [baseUrl, setBaseUrl] = useState(settings.base_url)
  const [model, setModel] = useState(settings.model)
  const [apiKey, setApiKey] = useState("")
  const [removeKey, setRemoveKey] = useState(false)
  const [timeout, setTimeoutMs] = useState(String(settings.timeout_ms))
  const fixed: ReadonlyArray<Field> = settings.fixed
  const [outcome, setOutcome] = useState<"saved" | "unchanged" | undefined>(undefined)
  const save = useMutation({
    mutationFn: (update: Update) => unwrap(api.POST("/api/llm", { body: update })),
    onSuccess: (saved) => {
      client.setQueryData(llmKey, saved)
      setApiKey("")
      setRemoveKey(false)
      setOutcome("saved")
    }
  })
  const submit = () => {
    setOutcome(undefined)
    const timeoutMs = timeout.trim() === "" ? settings.timeout_ms : Number(timeout)
    const changed: Update = {
      ...(baseUrl.trim() === settings.base_url ? {} : { base_url: baseUrl }),
      ...(model === settings.model ? {} : { model }),
      ...(removeKey ? { api_key: "" } : apiKey === "" ? {} : { api_key: apiKey }),
      ...(timeoutMs === settings.timeout_ms ? {} : { timeout_ms: timeoutMs })
    }
    // what the environment fixes is not sent again
    const update: Update = Object.fromEntries(Object.entries(changed).filter(([f]) => !fixed.includes(f as Field)))
    if (Object.keys(update).length === 0) {
      save.reset()
      setOutcome("unchanged")
      return
    }
    save.mutate(update)
  }
  const { byField, rest } = fieldErrors(save.error, fields)
  const fixedNote = (field: Field) => fixed.includes(field) ? texts.fixed : undefined
  return (
    <form
      className="card settings-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
    >
      <h2>{texts.llm}</h2>
      <p className="muted">{texts.llmIntro}</p>
      <p>{settings.configured ? texts.configured : texts.notConfigured}</p>
      <TextField
        label={texts.baseUrl}
        type="url"
        inputMode="url"
        value={baseUrl}
        onChange={(e) => setBaseUrl(e.target.value)}
        readOnly={fixed.includes("base_url")}
        error={byField.base_url}
        hint={fixedNote("base_url") ?? texts.baseUrlHint}
        autoComplete="off"
        spellCheck={false}
      />
      <TextField
        label={texts.model}
        value={model}
        onChange={(e) => setModel(e.target.value)}
        readOnly={fixed.includes("model")}
        error={byField.model}
        hint={fixedNote("model") ?? texts.modelHint}
        autoComplete="off"
        spellCheck={false}
      />
      <TextField
        label={texts.apiKey}
        type="password"
        value={apiKey}
        onChange={(e) => setApiKey(e.target.value)}
        readOnly={fixed.includes("api_key") || removeKey}
        error={byField.api_key}
        hint={fixedNote("api_key") ?? (settings.api_key === "" ? texts.keyUnset : texts.keySet)}
        autoComplete="new-password"
        spellCheck={false}
      />
      {settings.api_key !== "" && !fixed.includes("api_key")
        ? (
          <CheckboxField
            label={texts.removeKey}
            checked={removeKey}
            onChange={(e) => {
              setRemoveKey(e.target.checked)
              if (e.target.checked) setApiKey("")
            }}
          />
        )
        : null}
      <TextField
        label={texts.timeout}
        type="number"
        inputMode="numeric"
        min={100}
        max={60000}
        step={100}
        value={timeout}
        onChange={(e) => setTimeoutMs(e.target.value)}
        readOnly={fixed.includes("timeout_ms")}
        error={byField.timeout_ms}
        hint={fixedNote("timeout_ms") ?? texts.timeoutHint}
      />
      <ErrorAlert error={rest} />
      <p role="status" className="settings-status">
        {outcome === "saved" ? texts.saved : outcome === "unchanged" ? texts.nothingChanged : ""}
      </p>
      <div className="dialog-actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? texts.saving : common.save}
        </button>
      </div>
    </form>
  )
}

/** `/settings`: the LLM router's `Base URL`, `Model`, `API key` (never shown; blank keeps it), `Save`. */
export const SettingsPage = () => {
  const texts = useTexts()
  const common = useCommonTexts()
  const settings = useQuery({ queryKey: llmKey, queryFn: () => unwrap(api.GET("/api/llm")) })
  return (
    <>
      <div className="page-header">
        <h1>{texts.title}</h1>
      </div>
      <ErrorAlert error={settings.error ?? undefined} />
      {settings.data === undefined
        ? (settings.isPending ? <p>{common.loading}</p> : null)
        : <SettingsForm settings={settings.data} />}
    </>
  )
}
