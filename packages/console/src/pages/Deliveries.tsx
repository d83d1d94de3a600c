import { defineTexts } from "../i18n"

const useTexts = defineTexts({ title: "Deliveries" }, { title: "Deliveries" })

/** `/deliveries`. */
export const DeliveriesPage = () => {
  const texts = useTexts()
  return <h1>{texts.title}</h1>
}
