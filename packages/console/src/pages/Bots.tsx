import { defineTexts } from "../i18n"

const useTexts = defineTexts({ title: "Bots" }, { title: "Bots" })

/** `/bots`. */
export const BotsPage = () => {
  const texts = useTexts()
  return <h1>{texts.title}</h1>
}
