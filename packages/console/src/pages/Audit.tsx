import { defineTexts } from "../i18n"

const useTexts = defineTexts({ title: "Audit" }, { title: "Audit" })

/** `/audit`. */
export const AuditPage = () => {
  const texts = useTexts()
  return <h1>{texts.title}</h1>
}
