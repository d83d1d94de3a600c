/** The absolute path of the built console (`dist/`). */
export declare const root: string
