import { defineTexts } from "../i18n"

const useTexts = defineTexts({ title: "Accounts" }, { title: "Accounts" })

/** `/accounts`. */
export const AccountsPage = () => {
  const texts = useTexts()
  return <h1>{texts.title}</h1>
}
