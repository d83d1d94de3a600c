import { defineTexts } from "../i18n"

const useTexts = defineTexts({ title: "Routes" }, { title: "Routes" })

/** `/routes`. */
export const RoutesPage = () => {
  const texts = useTexts()
  return <h1>{texts.title}</h1>
}
