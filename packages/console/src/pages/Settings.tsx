import { defineTexts } from "../i18n"

const useTexts = defineTexts({ title: "Settings" }, { title: "Settings" })

/** `/settings`. */
export const SettingsPage = () => {
  const texts = useTexts()
  return <h1>{texts.title}</h1>
}
