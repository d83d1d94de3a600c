import { createRootRoute, createRoute, createRouter, Link, Navigate, Outlet } from "@tanstack/react-router"
import { basePath } from "./api/client"
import { AdminOnly, Layout } from "./Layout"
import { AccountsPage } from "./pages/Accounts"
import { AuditPage } from "./pages/Audit"
import { BotsPage } from "./pages/Bots"
import { ChatsPage, ChatView, NoChat } from "./pages/Chats"
import { DeliveriesPage } from "./pages/Deliveries"
import { KeysPage } from "./pages/Keys"
import { RoutesPage } from "./pages/Routes"
import { SettingsPage } from "./pages/Settings"
import { SignIn } from "./pages/SignIn"
import { StatusPage } from "./pages/Status"
import { useCommonTexts } from "./texts"

const NotFound = () => {
  const texts = useCommonTexts()
  return (
    <div className="page-center">
      <p>{texts.notFound}</p>
      <Link to="/chats">{texts.chats}</Link>
    </div>
  )
}

const rootRoute = createRootRoute({ component: Outlet, notFoundComponent: NotFound })

const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/sign-in",
  validateSearch: (search: Record<string, unknown>): { next?: string } =>
    typeof search.next === "string" ? { next: search.next } : {},
  component: SignIn
})

const appRoute = createRoute({ getParentRoute: () => rootRoute, id: "app", component: Layout })

const indexRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/",
  component: () => <Navigate to="/chats" replace />
})

const chatsRoute = createRoute({ getParentRoute: () => appRoute, path: "/chats", component: ChatsPage })
const noChatRoute = createRoute({ getParentRoute: () => chatsRoute, path: "/", component: NoChat })
const chatRoute = createRoute({
  getParentRoute: () => chatsRoute,
  path: "$botId/$chatId",
  validateSearch: (search: Record<string, unknown>): { message?: number } =>
    typeof search.message === "number" ? { message: search.message } : {},
  component: ChatView
})

const admin = (Page: () => React.ReactNode) => () => <AdminOnly><Page /></AdminOnly>

const page = (path: string, component: () => React.ReactNode) =>
  createRoute({ getParentRoute: () => appRoute, path, component })

const routeTree = rootRoute.addChildren([
  signInRoute,
  appRoute.addChildren([
    indexRoute,
    chatsRoute.addChildren([noChatRoute, chatRoute]),
    page("/bots", BotsPage),
    page("/routes", admin(RoutesPage)),
    page("/deliveries", DeliveriesPage),
    page("/keys", admin(KeysPage)),
    page("/accounts", admin(AccountsPage)),
    page("/audit", admin(AuditPage)),
    page("/status", admin(StatusPage)),
    page("/settings", admin(SettingsPage))
  ])
])

/** The console's pages, under the folder it is served from. */
export const router = createRouter({
  routeTree,
  basepath: basePath.replace(/\/$/, "") || "/",
  defaultPreload: "intent",
  scrollRestoration: true
})

declare module "@tanstack/react-router" {
  interface Register {
    router: typeof router
  }
}
