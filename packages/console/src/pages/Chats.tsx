import { Outlet } from "@tanstack/react-router"
import { defineTexts } from "../i18n"

const useTexts = defineTexts({ title: "Chats" }, { title: "Чаты" })

/** `/chats`: the chat list beside the open chat. */
export const ChatsPage = () => {
  const texts = useTexts()
  return (
    <div>
      <h1>{texts.title}</h1>
      <Outlet />
    </div>
  )
}

/** `/chats/$botId/$chatId`. */
export const ChatView = () => null

/** `/chats` with no chat open. */
export const NoChat = () => null
