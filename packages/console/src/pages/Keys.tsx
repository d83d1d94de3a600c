import { defineTexts } from "../i18n"

const useTexts = defineTexts({ title: "Keys" }, { title: "Keys" })

/** `/keys`. */
export const KeysPage = () => {
  const texts = useTexts()
  return <h1>{texts.title}</h1>
}
