export * as Api from "./Api.js"
export * as ApiError from "./ApiError.js"
export * as Handlers from "./Handlers.js"
export * as HttpApp from "./HttpApp.js"
