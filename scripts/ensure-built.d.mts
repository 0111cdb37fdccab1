/** Types of ensure-built.mjs (plain JavaScript, so that it runs before anything is compiled). */
export declare const BUNDLE_FILE: string
export declare const BUILD_INPUTS: readonly string[]
export declare function buildIsStale(root: string): boolean
export declare function ensureBuilt(root: string, options?: { readonly reason?: string }): boolean
